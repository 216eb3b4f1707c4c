// The endpoint's connection watchdog (connection_watchdog.hpp): a thread that scans the process's sockets.
#include "serve/http/connection_watchdog.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <set>

namespace corun::serve::http {

namespace {

int local_port_of(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return -1;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return -1;
}

// The process's open sockets: the numbers in /proc/self/fd that fstat calls sockets.
std::set<int> open_sockets() {
  std::set<int> fds;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return fds;
  const int own = dirfd(dir);
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    struct stat st {};
    if (end != e->d_name && *end == '\0' && fd != own && fstat(static_cast<int>(fd), &st) == 0 && S_ISSOCK(st.st_mode))
      fds.insert(static_cast<int>(fd));
  }
  closedir(dir);
  return fds;
}

}  // namespace

std::string peer_of(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "";
  char host[INET6_ADDRSTRLEN] = {0};
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  } else {
    return "";
  }
  return std::string(host) + ":" + std::to_string(port);
}

ConnectionWatchdog::ConnectionWatchdog(int listen_fd, int port, std::chrono::milliseconds limit,
                                       std::chrono::milliseconds period)
    : listen_fd_(listen_fd), port_(port), limit_(limit), period_(period), thread_([this] { run(); }) {}

ConnectionWatchdog::~ConnectionWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ConnectionWatchdog::handler_started(const std::string& peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++busy_peers_[peer];
}

void ConnectionWatchdog::handler_finished(const std::string& peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--busy_peers_[peer] <= 0) busy_peers_.erase(peer);
  answered_[peer] = std::chrono::steady_clock::now();
}

uint64_t ConnectionWatchdog::cut() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cut_;
}

void ConnectionWatchdog::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, period_, [this] { return stopping_; });
    if (stopping_) break;
    lock.unlock();
    scan();
    lock.lock();
  }
}

// One pass: every connection on our port that is neither being handled nor within its limit is shut down. The
// peer is read again right before the shutdown, so that a descriptor closed and reused meanwhile by a new
// connection (another peer port) is left alone.
void ConnectionWatchdog::scan() {
  const auto now = std::chrono::steady_clock::now();
  std::set<std::string> live, live_peers;
  for (int fd : open_sockets()) {
    if (fd == listen_fd_ || local_port_of(fd) != port_) continue;
    const std::string peer = peer_of(fd);
    if (peer.empty()) continue;
    const std::string key = std::to_string(fd) + "/" + peer;
    live.insert(key);
    live_peers.insert(peer);
    std::lock_guard<std::mutex> lock(mutex_);
    Connection& c = connections_.try_emplace(key, Connection{now, false}).first->second;
    if (c.cut || busy_peers_.count(peer)) continue;
    const auto answered = answered_.find(peer);
    const auto start = answered != answered_.end() && answered->second > c.since ? answered->second : c.since;
    if (now - start > limit_ && peer_of(fd) == peer) {
      shutdown(fd, SHUT_RDWR);
      c.cut = true;
      ++cut_;
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = connections_.begin(); it != connections_.end();)
    it = live.count(it->first) ? std::next(it) : connections_.erase(it);
  for (auto it = answered_.begin(); it != answered_.end();)
    it = live_peers.count(it->first) ? std::next(it) : answered_.erase(it);
}

}  // namespace corun::serve::http
