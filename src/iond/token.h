// The shared token that clients present in Hello.
//
// A token keeps clients that can reach a TCP listener from other machines out unless they were
// given the secret. It is read from a file (--token-file) or from STAGIO_IOND_TOKEN, never from
// the command line or the config file, where `ps` or a copied config would show it.
#pragma once

#include <string>

#include "common/status.h"

namespace stagio {
namespace iond {

// The environment variable that holds the token when no token file is given.
constexpr char kTokenVariable[] = "STAGIO_IOND_TOKEN";

// Reads the token from `path`, without one trailing newline ("\n" or "\r\n"), as `echo` and
// editors leave one. An unreadable or empty file is an error naming the file.
Status ReadTokenFile(const std::string& path, std::string* token);

// The token text without one trailing newline.
std::string StripTrailingNewline(std::string text);

// Compares in time that depends only on the lengths, so a client cannot find the token byte
// by byte from how long a refusal takes.
bool TokensEqual(const std::string& expected, const std::string& given);

}  // namespace iond
}  // namespace stagio
