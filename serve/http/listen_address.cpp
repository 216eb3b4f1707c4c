// Names the reason a bind failed (listen_address.hpp) by resolving the host and binding a probe socket.
#include "serve/http/listen_address.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace corun::serve::http {

namespace {

// The errno of binding `host`:`port` as httplib does (SO_REUSEADDR), 0 when it works now.
int probe_bind(const addrinfo* ai) {
  const int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
  if (fd < 0) return errno;
  int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  const int error = ::bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 ? 0 : errno;
  close(fd);
  return error;
}

}  // namespace

std::string bind_failure(const std::string& host, int port) {
  const std::string address = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (gai != 0)
    return "--host " + host + ": not an address or a host name this machine can resolve (" + gai_strerror(gai) +
           "); give an address of this machine, such as 127.0.0.1";
  int error = 0;
  for (const addrinfo* ai = found; ai && error == 0; ai = ai->ai_next) error = probe_bind(ai);
  freeaddrinfo(found);
  const std::string reason = error ? std::strerror(error) : "it may have been taken meanwhile";
  if (error == EADDRINUSE)
    return address + " is in use (" + reason + "): stop what listens there or pick another --port "
                     "(--port 0 picks a free one)";
  if (error == EADDRNOTAVAIL)
    return "--host " + host + " is not an address of this machine (" + reason + "); use one of its own, such as "
           "127.0.0.1";
  if (error == EACCES)
    return "cannot listen on " + address + " (" + reason + "): ports below 1024 need privileges; pick a --port "
           "above 1023";
  return "cannot listen on " + address + " (" + reason + "); pick another --port or --host";
}

}  // namespace corun::serve::http
