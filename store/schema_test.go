package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dumpSchema is a database's schema as SQLite keeps it: sqlite_master's
// statements in creation order (SQLite's own tables left out), each ending
// with ";\n".
func dumpSchema(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.Query("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
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
		require.NoError(t, os.WriteFile("schema.sql", []byte(want), 0o644))
	}
	require.Equal(t, want, schemaSQL, "schema.sql is not what the migrations build: UPDATE_SCHEMA=1 go test -run TestFreshSchemaIsTheMigratedSchema ./store")

	fresh := open(t.TempDir())
	require.NoError(t, migrate(ctx, fresh, migrations))
	require.Equal(t, want, dumpSchema(t, fresh))
	var vm, vf int
	require.NoError(t, migrated.QueryRow("PRAGMA user_version").Scan(&vm))
	require.NoError(t, fresh.QueryRow("PRAGMA user_version").Scan(&vf))
	require.Equal(t, len(migrations), vm)
	require.Equal(t, vm, vf)
	// Each table's columns, defaults, keys and foreign keys, as SQLite
	// reads them.
	layout := func(db *sql.DB) string {
		rows, err := db.Query(`SELECT m.name, c.cid, c.name, c.type, c."notnull", ifnull(c.dflt_value, ''), c.pk
			FROM sqlite_master m, pragma_table_xinfo(m.name) c WHERE m.type = 'table' ORDER BY m.name, c.cid`)
		require.NoError(t, err)
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var tbl, name, typ, dflt string
			var cid, notnull, pk int
			require.NoError(t, rows.Scan(&tbl, &cid, &name, &typ, &notnull, &dflt, &pk))
			b.WriteString(strings.Join([]string{tbl, name, typ, dflt}, "|"))
			b.WriteByte('\n')
		}
		require.NoError(t, rows.Err())
		return b.String()
	}
	require.NotEmpty(t, layout(fresh))
	require.Equal(t, layout(migrated), layout(fresh))
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
