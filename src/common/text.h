// Small string helpers for parsing settings and specs, and for saying durations in messages.
#pragma once

#include <chrono>
#include <string>

namespace stagio {

bool StartsWith(const std::string& text, const char* prefix);
// `text` without leading and trailing white space.
std::string Trim(const std::string& text);
// ASCII lower case, whatever the locale.
std::string ToLower(std::string text);
// "10 s", "1500 ms": whole seconds when the duration is one, milliseconds otherwise.
std::string DescribeDuration(std::chrono::milliseconds duration);

}  // namespace stagio
