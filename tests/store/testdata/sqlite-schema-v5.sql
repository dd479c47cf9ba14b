-- The job store as gpuprobed 0.1.0 (schema version 5, commit 033ce59) created it: its
-- migrations 1-5 applied to an empty SQLite database, as sqlite3 .schema prints the result.
CREATE TABLE jobs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  state INTEGER NOT NULL,
  request BLOB NOT NULL,
  priority INTEGER NOT NULL DEFAULT 0,
  submitter TEXT NOT NULL DEFAULT '',
  idempotency_key TEXT UNIQUE,
  created_us INTEGER NOT NULL,
  started_us INTEGER,
  finished_us INTEGER,
  device TEXT NOT NULL DEFAULT '',
  error_code INTEGER NOT NULL DEFAULT 0,
  error_message TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  results INTEGER NOT NULL DEFAULT 0,
  next_event INTEGER NOT NULL DEFAULT 0
, pinned_device INTEGER, device_index INTEGER, telemetry BLOB, target_gpu TEXT NOT NULL DEFAULT '', target_host TEXT NOT NULL DEFAULT '', host TEXT NOT NULL DEFAULT '', lease_owner TEXT NOT NULL DEFAULT '', lease_expires_us INTEGER NOT NULL DEFAULT 0, cancel_requested INTEGER NOT NULL DEFAULT 0);
CREATE INDEX jobs_by_queue ON jobs(state, priority DESC, seq);
CREATE TABLE job_labels (
  job_seq INTEGER NOT NULL REFERENCES jobs(seq),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (job_seq, key)
);
CREATE TABLE events (
  job_seq INTEGER NOT NULL REFERENCES jobs(seq),
  seq INTEGER NOT NULL,
  event BLOB NOT NULL,
  PRIMARY KEY (job_seq, seq)
);
CREATE TABLE write_probe (bytes BLOB NOT NULL);
CREATE TABLE daemons (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  started_us INTEGER NOT NULL,
  heartbeat_us INTEGER NOT NULL
);
CREATE TABLE devices (
  daemon_id TEXT NOT NULL,
  device_index INTEGER NOT NULL,
  model TEXT NOT NULL,
  description TEXT NOT NULL,
  calibrated_read_tbps REAL NOT NULL,
  running_job TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (daemon_id, device_index)
);
PRAGMA user_version = 5;
