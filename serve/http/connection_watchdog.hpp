// serve/http/connection_watchdog.hpp — cuts the connections of the endpoint that take too long to send a request
// (slowloris: one byte a second keeps every per-read timeout happy and a worker thread busy forever).
//
// httplib hands its worker the accepted socket privately, so the watchdog finds the endpoint's connections itself:
// every scan lists the process's sockets whose local port is the endpoint's (/proc/self/fd, getsockname), and a
// connection that has been open for longer than the limit without a request being handled is shut down, which
// makes httplib's blocked read return and its worker free. A handler marks its connection busy (by the peer's
// address and port, which httplib's Request carries) while the model computes, and idle again when it returns.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace corun::serve::http {

class ConnectionWatchdog {
 public:
  /// Watches the connections accepted on local `port` (not the listening socket `listen_fd`); scans every
  /// `period`. A connection may spend at most `limit` between requests (reading one, writing its response).
  ConnectionWatchdog(int listen_fd, int port, std::chrono::milliseconds limit,
                     std::chrono::milliseconds period = std::chrono::milliseconds(200));
  ~ConnectionWatchdog();  ///< stops the scans

  ConnectionWatchdog(const ConnectionWatchdog&) = delete;
  ConnectionWatchdog& operator=(const ConnectionWatchdog&) = delete;

  /// A request from `peer` ("127.0.0.1:51234") is being handled: its connection is not cut meanwhile.
  void handler_started(const std::string& peer);
  /// ...and answered: its connection has `limit` again for the response and the next request.
  void handler_finished(const std::string& peer);

  /// Connections cut so far.
  uint64_t cut() const;

 private:
  struct Connection {
    std::chrono::steady_clock::time_point since;  ///< first seen open
    bool cut = false;
  };

  void run();
  void scan();

  const int listen_fd_, port_;
  const std::chrono::milliseconds limit_, period_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, Connection> connections_;  ///< by "fd/peer": a reused fd is a new connection
  std::map<std::string, int> busy_peers_;          ///< handlers running, by peer
  std::map<std::string, std::chrono::steady_clock::time_point> answered_;  ///< last answer, by peer
  uint64_t cut_ = 0;
  std::thread thread_;
};

/// "127.0.0.1:51234" for a connected socket's peer, "" when it has none (or is not a TCP socket).
std::string peer_of(int fd);

}  // namespace corun::serve::http
