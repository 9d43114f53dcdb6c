-- Storage v2 (issue 20): retention walks the events by their key, (application_id, id),
-- application by application up to the first id of the cutoff: ids are ULIDs whose first ten
-- characters are the time they were made. The index of the events' age it walked before took
-- an entry from every publish (about 67 bytes of WAL per delivered event, bench storage).

-- DropIndex
DROP INDEX "events_created_at_idx";
