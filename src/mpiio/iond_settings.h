// The I/O-node tier as the settings ask for it (stagio_iond, stagio_iond_token[_file]).
#pragma once

#include <memory>

#include "common/config.h"
#include "storage/iond_driver.h"

namespace stagio {

// The iond driver over `direct`, or null if stagio_iond is empty or malformed (then `speak`
// warns, naming the setting, and stagio reads and writes storage directly).
std::unique_ptr<IondDriver> MakeIondDriver(const Settings& settings, Driver* direct, bool speak);

}  // namespace stagio
