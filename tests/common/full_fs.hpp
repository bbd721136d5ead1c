// full_fs.hpp — running a piece of a test where writes fail the way they do on a full disk, in a
// child process so that nothing leaks into the test binary:
//   - in_full_tmpfs: `dir` is covered by a 4 KiB tmpfs filled to the last byte (ENOSPC), inside a
//     private user and mount namespace (no root needed where the kernel allows unprivileged user
//     namespaces); reports that it could not when namespaces or tmpfs are unavailable;
//   - with_file_size_limit: RLIMIT_FSIZE set to `bytes` and SIGXFSZ ignored, so that a write
//     beyond it fails with EFBIG (works everywhere, no privilege).
// `body` returns a text that the parent gets back (e.g. the error a write threw and what is left
// in the folder); "" from the helpers' own failures never happens: they return "unavailable: ...".
#pragma once

#include <functional>
#include <string>

namespace flashlab::test {

/// Runs `body` in a child whose `dir` (an existing folder) is a full tmpfs. Returns what `body`
/// returned, or "unavailable: <why>" when the tmpfs could not be set up.
std::string in_full_tmpfs(const std::string& dir, const std::function<std::string()>& body);

/// Runs `body` in a child whose files cannot grow beyond `bytes`. Returns what `body` returned.
std::string with_file_size_limit(long bytes, const std::function<std::string()>& body);

/// The names in `dir`, sorted, joined by spaces ("" when empty).
std::string listing(const std::string& dir);

}  // namespace flashlab::test
