// A request's query string as the HTTP API reads it: split at '&', each pair at its first '='
// only (so `base=label:branch=main` keeps `label:branch=main` whole), percent-decoded ('+' is a
// space). httplib's own split cuts a value at its second '='.
//
//   QueryParams query = QueryParams::Parse(req.target);
//   RETURN_IF_ERROR(query.AllowOnly({"base", "cand"}));
//   std::optional<std::string> base = query.First("base");
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpuprobe {

class QueryParams {
 public:
  // `target` is the request target (path, then '?' and the query, if any).
  static QueryParams Parse(absl::string_view target);

  // INVALID_ARGUMENT for a '%' not followed by two hex digits (%zz, a trailing '%'), or naming
  // the first parameter that is not one of `names`, with the parameters this path takes.
  absl::Status AllowOnly(std::initializer_list<absl::string_view> names) const;

  std::optional<std::string> First(absl::string_view name) const;
  std::vector<std::string> All(absl::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& pairs() const { return pairs_; }

 private:
  std::vector<std::pair<std::string, std::string>> pairs_;  // in the order given
  absl::Status error_;                                      // the first malformed escape
};

}  // namespace gpuprobe
