#include "server/web/query_params.h"

#include <httplib.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpuprobe {

namespace {

// Whether every '%' of `text` starts an escape of two hex digits.
bool WellEscaped(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') continue;
    if (i + 2 >= text.size() || !absl::ascii_isxdigit(text[i + 1]) ||
        !absl::ascii_isxdigit(text[i + 2])) {
      return false;
    }
    i += 2;
  }
  return true;
}

}  // namespace

QueryParams QueryParams::Parse(absl::string_view target) {
  QueryParams query;
  const size_t mark = target.find('?');
  if (mark == absl::string_view::npos) return query;
  for (absl::string_view pair : absl::StrSplit(target.substr(mark + 1), '&', absl::SkipEmpty())) {
    if (!WellEscaped(pair) && query.error_.ok()) {
      query.error_ = absl::InvalidArgumentError(absl::StrCat(
          "query: \"", pair.substr(0, 100), "\" has a '%' that is not followed by two hex digits"));
    }
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    query.pairs_.emplace_back(
        httplib::detail::decode_url(std::string(kv.first.data(), kv.first.size()), true),
        httplib::detail::decode_url(std::string(kv.second.data(), kv.second.size()), true));
  }
  return query;
}

absl::Status QueryParams::AllowOnly(std::initializer_list<absl::string_view> names) const {
  if (!error_.ok()) return error_;
  for (const auto& [name, value] : pairs_) {
    bool known = false;
    for (absl::string_view n : names) known = known || name == n;
    if (known) continue;
    const std::vector<std::string> taken(names.begin(), names.end());
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": not a parameter of this path; it takes ",
                     taken.empty() ? std::string("none") : absl::StrJoin(taken, ", ")));
  }
  return absl::OkStatus();
}

std::optional<std::string> QueryParams::First(absl::string_view name) const {
  for (const auto& [n, value] : pairs_) {
    if (n == name) return value;
  }
  return std::nullopt;
}

std::vector<std::string> QueryParams::All(absl::string_view name) const {
  std::vector<std::string> values;
  for (const auto& [n, value] : pairs_) {
    if (n == name) values.push_back(value);
  }
  return values;
}

}  // namespace gpuprobe
