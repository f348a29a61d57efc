// remove_tree: std::filesystem::remove_all's job, safe in processes that link libtorch.
#pragma once

#include <string>
#include <system_error>

namespace kg::loader {

// Removes a file or a directory tree without following links. Use it instead of
// std::filesystem::remove_all in anything that links libtorch: PyTorch 2.x wheels export a broken
// copy of remove_all that can win symbol lookup (it calls through a null pointer).
// tests/loader/no_remove_all_test.cc keeps the project's sources free of remove_all.
void remove_tree(const std::string& path, std::error_code& ec);

}  // namespace kg::loader
