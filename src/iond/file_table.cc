#include "iond/file_table.h"

#include <sys/stat.h>

#include "segstore/segmented_file.h"
#include "storage/driver.h"

namespace stagio {
namespace iond {

FileTable::FileTable(BlockCache* cache, IoThread* io_thread, uint64_t block_size,
                     uint64_t prefetch_blocks, segstore::SegmentStore* segment_store)
    : cache_(cache),
      io_thread_(io_thread),
      block_size_(block_size),
      prefetch_blocks_(prefetch_blocks),
      segment_store_(segment_store) {}

FileTable::~FileTable() {
  for (const auto& [path, entry] : entries_) Forget(entry.file);
}

Status FileTable::OpenEntry(OpenedFile opened, std::shared_ptr<DaemonFile>* file) {
  const FileIdentity identity{opened.device, opened.inode};
  const bool writable = opened.writable;
  std::unique_ptr<DriverFile> driver_file =
      PosixFileFromDescriptor(std::move(opened.path), opened.fd.Release());
  if (segment_store_ != nullptr) {
    const segstore::FileKey key{static_cast<uint64_t>(identity.device),
                                static_cast<uint64_t>(identity.inode)};
    driver_file = std::make_unique<segstore::SegmentedFile>(std::move(driver_file),
                                                           segment_store_, key);
  }
  uint64_t size = 0;
  Status status = driver_file->GetSize(&size);
  if (!status.ok()) return status;
  const uint64_t id = next_id_++;
  *file = std::make_shared<DaemonFile>(id, identity, std::move(driver_file), writable,
                                       block_size_, size, prefetch_blocks_);
  cache_->RegisterFile(id, *file, block_size_);
  return Status::OK();
}

Status FileTable::Acquire(OpenedFile opened, bool need_write,
                          std::shared_ptr<DaemonFile>* file) {
  std::lock_guard<std::mutex> lock(mutex_);
  const FileIdentity identity{opened.device, opened.inode};
  auto it = entries_.find(identity);
  if (it == entries_.end()) {
    std::shared_ptr<DaemonFile> created;
    Status status = OpenEntry(std::move(opened), &created);
    if (!status.ok()) return status;
    it = entries_.emplace(identity, Entry{created, 0}).first;
  }
  if (need_write && !it->second.file->writable()) {
    const std::string path = it->second.file->path();
    if (it->second.users == 0) {
      Forget(it->second.file);
      entries_.erase(it);
    }
    return Status::InvalidArgument(path + ": the daemon may only read this file, and the "
                                   "client asked to write it");
  }
  ++it->second.users;
  *file = it->second.file;
  return Status::OK();
}

Status FileTable::Release(const std::shared_ptr<DaemonFile>& file) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(file->identity());
    if (it == entries_.end() || it->second.file != file) return Status::OK();
    if (--it->second.users > 0) return Status::OK();
    entries_.erase(it);
  }
  cache_->FlushFile(file->id());  // failures are recorded by the file
  Status status = file->TakeWriteBackError();
  if (status.ok() && sync_on_last_release_) status = file->driver_file()->Sync();
  Forget(file);
  return status;
}

void FileTable::Forget(const std::shared_ptr<DaemonFile>& file) {
  io_thread_->DropPrefetches(file->id());
  cache_->DiscardFile(file->id());
  cache_->UnregisterFile(file->id());
  std::lock_guard<std::mutex> lock(stats_mutex_);
  closed_stats_.MergeFrom(*file->stats());
}

std::vector<std::shared_ptr<DaemonFile>> FileTable::OpenFiles() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<DaemonFile>> files;
  for (const auto& [path, entry] : entries_) files.push_back(entry.file);
  return files;
}

std::shared_ptr<DaemonFile> FileTable::Find(const std::string& path) const {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(FileIdentity{info.st_dev, info.st_ino});
  return it == entries_.end() ? nullptr : it->second.file;
}

nlohmann::json FileTable::StatsJson() const {
  FileStats total;
  {
    std::lock_guard<std::mutex> lock(stats_mutex_);
    total.MergeFrom(closed_stats_);
  }
  for (const auto& file : OpenFiles()) total.MergeFrom(*file->stats());
  return total.ToJson();
}

}  // namespace iond
}  // namespace stagio
