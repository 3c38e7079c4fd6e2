package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dumpSchema is a database's schema as SQLite keeps it: sqlite_master's
// statements in creation order (SQLite's own tables left out), each ending
// with ";\n". The shadow tables of a virtual table (FTS5's) are left out:
// its CREATE VIRTUAL TABLE makes them.
func dumpSchema(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query(`SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%'
		AND name NOT IN (SELECT name FROM pragma_table_list WHERE type = 'shadow') ORDER BY rowid`)
	require.NoError(t, err)
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		b.WriteString(s + ";\n")
	}
	require.NoError(t, rows.Err())
	return b.String()
}

// TestFreshSchemaIsTheMigratedSchema: a database the migrations bring from
// version 0 and one created from schema.sql have the same schema, version
// and table layouts. UPDATE_SCHEMA=1 rewrites schema.sql from the
// migrations (after a new migration).
func TestFreshSchemaIsTheMigratedSchema(t *testing.T) {
	ctx := context.Background()
	open := func(dir string) *sql.DB {
		db, err := sql.Open("sqlite", dsn(filepath.Join(dir, DBFile), defaultBusy, false))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	}
	migrated := open(t.TempDir())
	for { // the migrations one by one, as an old file gets them
		done, err := migrateOne(ctx, migrated, migrations)
		require.NoError(t, err)
		if done {
			break
		}
	}
	want := dumpSchema(t, migrated)
	if os.Getenv("UPDATE_SCHEMA") == "1" {
		// The embedded copy is this build's: the next run checks the file.
		require.NoError(t, os.WriteFile("schema.sql", []byte(want), 0o644))
		t.Skip("rewrote schema.sql; run the test again")
	}
	require.Equal(t, want, schemaSQL, "schema.sql is not what the migrations build: UPDATE_SCHEMA=1 go test -run TestFreshSchemaIsTheMigratedSchema ./store, then again without it")

	fresh := open(t.TempDir())
	require.NoError(t, migrate(ctx, fresh, migrations))
	require.Equal(t, want, dumpSchema(t, fresh))
	var vm, vf int
	require.NoError(t, migrated.QueryRow("PRAGMA user_version").Scan(&vm))
	require.NoError(t, fresh.QueryRow("PRAGMA user_version").Scan(&vf))
	require.Equal(t, len(migrations), vm)
	require.Equal(t, vm, vf)
	// Each table's columns (position, type, NOT NULL, default, key),
	// foreign keys and indexes, as SQLite reads them.
	layout := func(db *sql.DB) string {
		var b strings.Builder
		for _, q := range []string{
			`SELECT m.name, c.cid, c.name, c.type, c."notnull", ifnull(c.dflt_value, ''), c.pk
				FROM sqlite_master m, pragma_table_xinfo(m.name) c WHERE m.type = 'table' ORDER BY m.name, c.cid`,
			`SELECT m.name, f.id, f.seq, f."table", f."from", ifnull(f."to", ''), f.on_update, f.on_delete
				FROM sqlite_master m, pragma_foreign_key_list(m.name) f WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq`,
			`SELECT m.name, i.name, i."unique", i.origin, i.partial
				FROM sqlite_master m, pragma_index_list(m.name) i WHERE m.type = 'table' ORDER BY m.name, i.name`,
		} {
			rows, err := db.Query(q)
			require.NoError(t, err)
			cols, err := rows.Columns()
			require.NoError(t, err)
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				require.NoError(t, rows.Scan(ptrs...))
				b.WriteString(fmt.Sprintln(vals...))
			}
			require.NoError(t, rows.Err())
			require.NoError(t, rows.Close())
		}
		return b.String()
	}
	l := layout(fresh)
	require.Contains(t, l, "sessions_by_project", "the layout lists indexes")
	require.Contains(t, l, "CASCADE", "the layout lists foreign keys")
	require.Equal(t, layout(migrated), l)
}

// An empty database is created from schema.sql, but a database with any
// schema object at version 0 (a file some other program made) is left to
// the migrations, which then fail on it rather than mix two schemas.
func TestFreshSchemaOnlyForAnEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), DBFile), defaultBusy, false))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec("CREATE TABLE projects (x INTEGER)")
	require.NoError(t, err)
	done, err := createFresh(ctx, db)
	require.NoError(t, err)
	require.False(t, done)
	require.Error(t, migrate(ctx, db, migrations), "the first migration's CREATE TABLE projects fails")
	var v int
	require.NoError(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	require.Zero(t, v)
}
