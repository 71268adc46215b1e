#include "iond/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace stagio {
namespace iond {

Status WriteFileAtomically(const std::string& path, const std::string& content) {
  // Same directory, so the rename stays on one file system and is atomic.
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << content;
    out.flush();
    if (!out) {
      const int error = errno;
      std::remove(temporary.c_str());
      return Status::IOError("cannot write " + temporary + ": " + std::strerror(error));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    return Status::IOError("cannot rename " + temporary + " to " + path + ": " +
                           std::strerror(error));
  }
  return Status::OK();
}

std::string ReadyFileText(const std::vector<net::Address>& addresses) {
  std::string text;
  for (const net::Address& address : addresses) text += address.ToString() + "\n";
  return text;
}

}  // namespace iond
}  // namespace stagio
