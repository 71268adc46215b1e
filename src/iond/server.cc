#include "iond/server.h"

#include <algorithm>
#include <utility>

namespace stagio {
namespace iond {

IondServer::IondServer(IondConfig config, LogSink log)
    : config_(std::move(config)), log_(log ? std::move(log) : LogSink(LogToStderr)) {}

IondServer::~IondServer() {
  if (running_) Stop();
}

Status IondServer::Start() {
  if (running_) return Status::InvalidArgument("the server is already running");
  // Checked here too, not only by ResolveConfig, for servers built from a config by hand.
  Status status = CheckTokenForListeners(config_);
  if (!status.ok()) return status;
  RootGuard root;
  status = RootGuard::Create(config_.root, &root);
  if (!status.ok()) return status;
  status = acceptor_.Listen(config_.listen);
  if (!status.ok()) return status;

  files_ = std::make_unique<FileService>(config_, std::move(root));
  pool_ = std::make_unique<RequestPool>(config_.request_threads);
  env_.files = files_.get();
  env_.pool = pool_.get();
  env_.stats = &stats_;
  env_.token = config_.token;
  env_.log = log_;
  env_.report_unflushed = [this](const std::string& path, const Status& error) {
    std::lock_guard<std::mutex> lock(mutex_);
    unflushed_.push_back(path + ": " + error.message());
  };
  status = acceptor_.Start([this](net::UniqueFd socket, std::string peer) {
                             Accept(std::move(socket), std::move(peer));
                           },
                           [this] { Reap(false); }, log_);
  if (!status.ok()) {
    acceptor_.Stop();
    return status;
  }
  running_ = true;
  return Status::OK();
}

void IondServer::Accept(net::UniqueFd socket, std::string peer) {
  stats_.CountAccepted();
  auto connection = std::make_shared<Connection>(std::move(socket), peer, &env_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (connections_.size() >= kMaxConnections) {
      // Each connection costs two threads; past the bound the client is told by a closed socket.
      log_("refusing the connection of client at " + peer + ": already " +
           std::to_string(kMaxConnections) + " connections");
      return;
    }
    connections_.push_back(connection);
  }
  Status status = connection->Start();
  if (status.ok()) return;
  log_("refusing the connection of client at " + peer + ": " + status.message());
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.erase(std::find(connections_.begin(), connections_.end(), connection));
}

void IondServer::Reap(bool everyone) {
  std::vector<std::shared_ptr<Connection>> done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (everyone || (*it)->finished()) {
        done.push_back(std::move(*it));
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& connection : done) connection->Join();
}

Status IondServer::Stop() {
  if (!running_) return Status::OK();
  running_ = false;
  acceptor_.Stop();
  // The last close of each file now fsyncs it, so that what the connections' teardowns close
  // is durable too.
  files_->SyncOnLastClose();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& connection : connections_) connection->StopReading();
  }
  Reap(true);
  pool_.reset();  // every request has finished: the connections waited for theirs
  const std::vector<std::string> failures = files_->FlushEverything();
  std::lock_guard<std::mutex> lock(mutex_);
  unflushed_.insert(unflushed_.end(), failures.begin(), failures.end());
  if (unflushed_.empty()) return Status::OK();
  std::string lost;
  for (const std::string& entry : unflushed_) lost += (lost.empty() ? "" : "; ") + entry;
  return Status::IOError("data may not be on storage: " + lost);
}

nlohmann::json IondServer::StatsJson() const {
  nlohmann::json stats = stats_.ToJson();
  stats["stagio_iond_version"] = STAGIO_VERSION_STRING;
  if (files_) {
    stats["cache"] = files_->files().StatsJson();
    stats["cache"]["capacity"] = files_->cache().capacity();
    stats["cache"]["dirty_bytes"] = files_->cache().dirty_bytes();
  }
  return stats;
}

}  // namespace iond
}  // namespace stagio
