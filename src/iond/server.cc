#include "iond/server.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

  files_ = std::make_unique<FileService>(config_, std::move(root), log_);
  pool_ = std::make_unique<RequestPool>(config_.request_threads);
  env_.files = files_.get();
  env_.pool = pool_.get();
  env_.stats = &stats_;
  env_.log = log_;
  env_.report_unflushed = [this](const std::string& path, const Status& error) {
    std::lock_guard<std::mutex> lock(mutex_);
    unflushed_.push_back(path + ": " + error.message());
  };
  HelloGateLimits limits;
  limits.deadline = std::chrono::milliseconds(std::llround(config_.hello_timeout * 1000));
  limits.max_hello_bytes = static_cast<uint32_t>(config_.hello_max_bytes);
  limits.max_pending = config_.max_unauthenticated;
  gate_ = std::make_unique<HelloGate>(limits, HelloPolicy{config_.token, files_->block_size()},
                                      &stats_, log_);
  status = gate_->Start([this](GreetedSocket* greeted) { return Serve(greeted); });
  if (status.ok()) {
    status = acceptor_.Start(
        [this](net::UniqueFd socket, std::string peer) {
          stats_.CountAccepted();
          gate_->Admit(std::move(socket), std::move(peer));
        },
        [this] { Reap(false); }, log_);
  }
  if (!status.ok()) {
    acceptor_.Stop();
    gate_->Stop();
    return status;
  }
  running_ = true;
  return Status::OK();
}

Status IondServer::Serve(GreetedSocket* greeted) {
  Reap(false);  // a connection that has ended gives its place back now, not at the next tick
  const std::string name = greeted->name;
  std::shared_ptr<Connection> connection;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (connections_.size() >= config_.max_connections) {
      // Answered in the Hello reply, so the client logs why it falls back to storage.
      return Status::IOError("the daemon serves " + std::to_string(config_.max_connections) +
                             " connections already");
    }
    connection = std::make_shared<Connection>(std::move(*greeted), &env_);
    connections_.push_back(connection);
  }
  Status status = connection->Start();
  if (status.ok()) return Status::OK();
  // Out of threads: the client sees its connection closed, as it would if the daemon died.
  log_("refusing the connection of " + name + ": " + status.message());
  std::lock_guard<std::mutex> lock(mutex_);
  connections_.erase(std::find(connections_.begin(), connections_.end(), connection));
  return Status::OK();
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
  gate_->Stop();  // no Connection starts after this
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
    if (files_->segment_store() != nullptr) {
      stats["segment_store"] = files_->segment_store()->StatsJson();
    }
  }
  return stats;
}

}  // namespace iond
}  // namespace stagio
