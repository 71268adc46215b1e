#include "storage/iond_driver.h"

#include <climits>
#include <cstdlib>

#include "common/log.h"
#include "storage/iond_file.h"

namespace stagio {
namespace {

net::FileAccess WireAccess(OpenAccess access) {
  switch (access) {
    case OpenAccess::kReadOnly: return net::FileAccess::kReadOnly;
    case OpenAccess::kWriteOnly: return net::FileAccess::kWriteOnly;
    case OpenAccess::kReadWrite: return net::FileAccess::kReadWrite;
  }
  return net::FileAccess::kReadOnly;
}

// The daemon knows files by absolute path; the application may have named it relative to its
// working directory, or through a symbolic link.
bool AbsolutePathOf(const std::string& path, std::string* absolute) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) return false;
  *absolute = resolved;
  return true;
}

// Closes the handles that some daemons gave out when another refused the file.
void CloseHandles(const std::vector<std::shared_ptr<net::ClientConnection>>& connections,
                  const std::vector<uint64_t>& handles, const std::vector<bool>& opened) {
  for (size_t i = 0; i < handles.size(); ++i) {
    if (!opened[i]) continue;
    net::StatusReply reply;
    connections[i]->Call<net::MessageType::kClose>(net::FileRequest{handles[i]}, &reply);
  }
}

}  // namespace

Status IondConnections::Get(std::vector<std::shared_ptr<net::ClientConnection>>* connections) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_.ok()) return failure_;
  if (connections_.empty()) {
    for (const net::Address& address : daemons_) {
      std::shared_ptr<net::ClientConnection> connection;
      Status status = net::ClientConnection::Open(address, token_, timeout_, &connection);
      if (!status.ok()) {
        connections_.clear();
        failure_ = status;
        return failure_;
      }
      connections_.push_back(std::move(connection));
    }
  }
  for (const auto& connection : connections_) {
    if (connection->broken()) {
      // Finish of any request on it says why; this names the daemon.
      failure_ = Status::IOError("lost the connection to stagio-iond at " +
                                 connection->address().ToString());
      return failure_;
    }
  }
  *connections = connections_;
  return Status::OK();
}

IondDriver::IondDriver(Driver* direct, std::vector<net::Address> daemons, std::string token,
                       net::Timeout timeout, bool speak)
    : direct_(direct),
      connections_(
          std::make_shared<IondConnections>(std::move(daemons), std::move(token), timeout)),
      speak_(speak) {}

Status IondDriver::Open(const std::string& path, OpenAccess access,
                        std::unique_ptr<DriverFile>* file) {
  std::unique_ptr<DriverFile> direct;
  Status status = direct_->Open(path, access, &direct);
  if (!status.ok()) return status;

  std::vector<std::shared_ptr<net::ClientConnection>> connections;
  status = connections_->Get(&connections);
  if (!status.ok()) {
    WarnOnce(speak_, "the I/O-node tier is off: " + status.message() +
                         "; files are read and written directly");
    *file = std::move(direct);
    return Status::OK();
  }
  std::string absolute;
  if (!AbsolutePathOf(path, &absolute)) {
    WarnOnce(speak_, "cannot resolve " + path + " for the I/O-node daemons; it is read and "
                     "written directly");
    *file = std::move(direct);
    return Status::OK();
  }
  net::OpenRequest request{absolute, static_cast<uint8_t>(WireAccess(access))};
  std::vector<std::shared_ptr<net::ClientConnection::Pending>> pending;
  for (const auto& connection : connections) {
    pending.push_back(connection->Start(net::MessageType::kOpen, net::EncodePayload(request)));
  }
  std::vector<uint64_t> handles(connections.size(), 0);
  std::vector<bool> opened(connections.size(), false);
  Status refusal;
  for (size_t i = 0; i < connections.size(); ++i) {
    net::OpenReply reply;
    Status status_i = connections[i]->FinishTyped<net::MessageType::kOpen>(pending[i], &reply);
    if (status_i.ok()) {
      handles[i] = reply.handle;
      opened[i] = true;
    } else if (refusal.ok()) {
      refusal = Status::IOError("stagio-iond at " + connections[i]->address().ToString() +
                                " refused " + absolute + ": " + status_i.message());
    }
  }
  if (!refusal.ok()) {
    CloseHandles(connections, handles, opened);
    WarnOnce(speak_, refusal.message() + "; the file is read and written directly");
    *file = std::move(direct);
    return Status::OK();
  }
  *file = std::make_unique<IondFile>(std::move(direct), std::move(connections),
                                     std::move(handles), speak_);
  return Status::OK();
}

}  // namespace stagio
