#include "iond/acceptor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stagio {
namespace iond {
namespace {

constexpr int kIdleMilliseconds = 1000;

}  // namespace

std::string DescribePeer(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof(address);
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return "unknown peer";
  if (address.ss_family == AF_UNIX) {
    ucred credentials{};
    socklen_t size = sizeof(credentials);
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) return "unix peer";
    return "unix pid " + std::to_string(credentials.pid) + " uid " +
           std::to_string(credentials.uid);
  }
  char host[INET6_ADDRSTRLEN] = {};
  uint16_t port = 0;
  if (address.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
    return "[" + std::string(host) + "]:" + std::to_string(port);
  }
  const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
  ::inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
  port = ntohs(in->sin_port);
  return std::string(host) + ":" + std::to_string(port);
}

Acceptor::~Acceptor() { Stop(); }

Status Acceptor::Listen(const std::vector<net::Address>& addresses) {
  for (const net::Address& address : addresses) {
    net::UniqueFd listener;
    net::Address bound;
    Status status = net::Listen(address, &listener, &bound);
    if (!status.ok()) {
      Stop();
      return status;
    }
    listeners_.push_back(std::move(listener));
    bound_.push_back(bound);
  }
  return Status::OK();
}

Status Acceptor::Start(OnAccept on_accept, std::function<void()> on_idle, LogSink log) {
  Status status = wake_.Open("the accept thread");
  if (!status.ok()) return status;
  on_accept_ = std::move(on_accept);
  on_idle_ = std::move(on_idle);
  log_ = std::move(log);
  thread_ = std::thread([this] { Run(); });
  return Status::OK();
}

void Acceptor::Stop() {
  if (thread_.joinable()) {
    wake_.Wake();
    thread_.join();
  }
  listeners_.clear();
  for (const net::Address& address : bound_) {
    struct stat info {};
    if (address.kind == net::Address::Kind::kUnix && ::lstat(address.path.c_str(), &info) == 0 &&
        S_ISSOCK(info.st_mode)) {
      ::unlink(address.path.c_str());
    }
  }
  bound_.clear();
}

void Acceptor::Run() {
  std::vector<pollfd> watched;
  watched.push_back({wake_.read_fd(), POLLIN, 0});
  for (const net::UniqueFd& listener : listeners_) watched.push_back({listener.get(), POLLIN, 0});
  bool reported_error = false;
  while (true) {
    const int ready = ::poll(watched.data(), watched.size(), kIdleMilliseconds);
    if (ready < 0 && errno != EINTR) {
      log_(std::string("poll on the listeners failed: ") + std::strerror(errno));
      return;
    }
    if (watched[0].revents != 0) return;  // Stop
    for (size_t i = 1; i < watched.size(); ++i) {
      if ((watched[i].revents & POLLIN) == 0) continue;
      net::UniqueFd socket(::accept4(watched[i].fd, nullptr, nullptr, SOCK_CLOEXEC));
      if (!socket.valid()) {
        const int error = errno;
        if (error == EAGAIN || error == ECONNABORTED || error == EINTR) continue;
        // Out of descriptors or memory: say so once, and give connections time to close
        // instead of spinning on a listener that stays readable.
        if (!reported_error) log_(std::string("accept failed: ") + std::strerror(error));
        reported_error = true;
        ::poll(nullptr, 0, 100);
        continue;
      }
      reported_error = false;
      const int one = 1;
      // Replies are small and latency matters (fails harmlessly on UNIX sockets).
      ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      std::string peer = DescribePeer(socket.get());
      on_accept_(std::move(socket), std::move(peer));
    }
    on_idle_();
  }
}

}  // namespace iond
}  // namespace stagio
