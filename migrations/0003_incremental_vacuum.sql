-- rvplay: no transaction
-- Compaction deletes records, and with SQLite's default auto_vacuum (NONE,
-- the mode 0001 created files in) the pages they held stay in the file as
-- free pages for good: the file never shrinks. INCREMENTAL keeps a map of
-- the pages, so that engine/sqlite gives the free pages back to the file
-- system (PRAGMA incremental_vacuum) in the transaction of every removal.
-- An existing file changes mode only through a VACUUM, which rewrites it
-- and cannot run inside a transaction: so this migration runs outside one.
-- Both statements may run again, should the process stop before the
-- migration is recorded; on a large file the VACUUM takes a while, once.
PRAGMA auto_vacuum = INCREMENTAL;
VACUUM;
