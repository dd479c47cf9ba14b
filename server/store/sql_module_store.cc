// SqlJobStore's modules: the bytes clients bring for the kernel probe, content-addressed, with
// the store's and each uploader's quota, and the ageing of what no queued or running job names.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "google/protobuf/util/time_util.h"
#include "server/store/sql_job_store.h"

namespace gpuprobe {
namespace {

using google::protobuf::util::TimeUtil;

double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// Modules that a queued or running job names, which ageing keeps.
constexpr char kReferenced[] =
    "SELECT m.module_id FROM job_modules m JOIN jobs j ON j.seq = m.job_seq "
    "WHERE j.state IN (?1, ?2)";

}  // namespace

absl::StatusOr<std::optional<StoredModule>> SqlJobStore::FindModuleLocked(const std::string& id,
                                                                          bool with_bytes) {
  ASSIGN_OR_RETURN(
      SqlRows rows,
      db_->Query(with_bytes
                     ? "SELECT record, uploaded_us, used_us, bytes FROM modules WHERE id = ?1"
                     : "SELECT record, uploaded_us, used_us FROM modules WHERE id = ?1",
                 {id}));
  if (rows.empty()) return std::nullopt;
  StoredModule stored;
  if (!stored.module.ParseFromString(rows.Text(0, 0))) {
    return absl::DataLossError(absl::StrCat("module ", id, ": its stored record does not parse"));
  }
  *stored.module.mutable_uploaded_at() = TimeUtil::MicrosecondsToTimestamp(rows.Int(0, 1));
  *stored.module.mutable_used_at() = TimeUtil::MicrosecondsToTimestamp(rows.Int(0, 2));
  if (with_bytes) stored.bytes = rows.Text(0, 3);
  return stored;
}

absl::StatusOr<int64_t> SqlJobStore::AgeOutModulesLocked(int64_t needed, int64_t quota_bytes) {
  ASSIGN_OR_RETURN(int64_t stored,
                   CountLocked("SELECT COALESCE(SUM(size_bytes), 0) FROM modules", {}));
  if (stored + needed <= quota_bytes) return stored;
  ASSIGN_OR_RETURN(SqlRows candidates,
                   db_->Query(absl::StrCat("SELECT id, size_bytes FROM modules WHERE id NOT IN (",
                                           kReferenced, ") ORDER BY used_us, id"),
                              {int64_t{v1::JOB_STATE_QUEUED}, int64_t{v1::JOB_STATE_RUNNING}}));
  for (size_t r = 0; r < candidates.size() && stored + needed > quota_bytes; ++r) {
    RETURN_IF_ERROR(
        db_->Query("DELETE FROM modules WHERE id = ?1", {candidates.Text(r, 0)}).status());
    stored -= candidates.Int(r, 1);
  }
  return stored;
}

absl::StatusOr<v1::Module> SqlJobStore::PutModule(const NewModule& module, const ModuleQuota& quota,
                                                  absl::Time now) {
  const v1::Module& m = module.module;
  const int64_t size = static_cast<int64_t>(module.bytes.size());
  absl::MutexLock lock(&mu_);
  std::optional<v1::Module> result;
  absl::Status s = InTransaction([&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::optional<StoredModule> existing, FindModuleLocked(m.id(), false));
    if (existing) {
      RETURN_IF_ERROR(
          db_->Query("UPDATE modules SET used_us = ?2 WHERE id = ?1", {m.id(), StoreMicros(now)})
              .status());
      result = existing->module;
      *result->mutable_used_at() = TimeUtil::MicrosecondsToTimestamp(StoreMicros(now));
      result->set_already_stored(true);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(const int64_t by_uploader,
                     CountLocked("SELECT COALESCE(SUM(size_bytes), 0) FROM modules "
                                 "WHERE uploader = ?1",
                                 {module.uploader}));
    if (by_uploader + size > quota.client_bytes) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "module: %s keeps %.1f MiB of modules; %.1f MiB more passes its quota of %.1f MiB "
          "(--client-module-quota-bytes)",
          module.uploader, MiB(by_uploader), MiB(size), MiB(quota.client_bytes)));
    }
    ASSIGN_OR_RETURN(const int64_t stored, AgeOutModulesLocked(size, quota.store_bytes));
    if (stored + size > quota.store_bytes) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "module: the store keeps %.1f MiB of modules that queued or running jobs name; %.1f "
          "MiB more passes its quota of %.1f MiB (--module-quota-bytes)",
          MiB(stored), MiB(size), MiB(quota.store_bytes)));
    }
    RETURN_IF_ERROR(db_->Query("INSERT INTO modules (id, record, bytes, size_bytes, uploader, "
                               "uploaded_us, used_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
                               {m.id(), SqlBlob{m.SerializeAsString()}, SqlBlob{module.bytes}, size,
                                module.uploader, StoreMicros(now)})
                        .status());
    result = m;
    *result->mutable_uploaded_at() = TimeUtil::MicrosecondsToTimestamp(StoreMicros(now));
    *result->mutable_used_at() = result->uploaded_at();
    return absl::OkStatus();
  });
  if (absl::IsAlreadyExists(s)) {
    // Another daemon stored the same bytes meanwhile: they are stored.
    ASSIGN_OR_RETURN(std::optional<StoredModule> existing, FindModuleLocked(m.id(), false));
    if (existing) {
      existing->module.set_already_stored(true);
      return existing->module;
    }
  }
  RETURN_IF_ERROR(s);
  return *result;
}

absl::StatusOr<StoredModule> SqlJobStore::GetModule(const std::string& id, bool with_bytes) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(std::optional<StoredModule> found, FindModuleLocked(id, with_bytes));
  if (!found) return absl::NotFoundError(absl::StrCat("module ", id, " is not stored"));
  return *std::move(found);
}

}  // namespace gpuprobe
