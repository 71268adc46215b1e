// Small string helpers for parsing settings and specs.
#pragma once

#include <string>

namespace stagio {

bool StartsWith(const std::string& text, const char* prefix);
// `text` without leading and trailing white space.
std::string Trim(const std::string& text);
// ASCII lower case, whatever the locale.
std::string ToLower(std::string text);

}  // namespace stagio
