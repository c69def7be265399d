package migrate_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// ownerMigrations make a table with an owned sequence and a free-standing
// sequence, which change owner differently.
var ownerMigrations = fstest.MapFS{
	"postgres/0001_things.sql": file(`CREATE TABLE things (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL);
		CREATE SEQUENCE tickets;`),
	"sqlite/0001_things.sql": file(`CREATE TABLE things (id INTEGER PRIMARY KEY, v TEXT NOT NULL);`),
}

// connectAs opens schema as role (the test server trusts local logins, so
// the role's own rights are what is tested, not its password).
func connectAs(t *testing.T, role, schema string) *database.DB {
	t.Helper()
	u, err := url.Parse(dbtest.PostgresURL())
	require.NoError(t, err)
	u.User = url.UserPassword(role, "secret-"+role)
	db, err := database.Open(context.Background(), database.Config{URL: u.String(), Schema: schema, MaxConns: 2})
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return db
}

func requireDenied(t *testing.T, err error, what string) {
	t.Helper()
	var pgErr *pgconn.PgError
	require.True(t, errors.As(err, &pgErr), "%s: want a Postgres error, got %v", what, err)
	require.Equal(t, "42501", pgErr.Code, "%s: insufficient privilege, got %v", what, err)
}

// TestEnsureOwnerConfinesEachServiceToItsSchema: after its migration, each
// service's role owns its schema and everything in it and may do anything
// there, and may not even look into another service's schema.
func TestEnsureOwnerConfinesEachServiceToItsSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ledger := dbtest.Open(t, database.Postgres, "ledger", ownerMigrations) // skips without Postgres
	agent := dbtest.Open(t, database.Postgres, "agent", ownerMigrations)
	ledgerRole, agentRole := ledger.Schema()+"_role", agent.Schema()+"_role"
	t.Cleanup(func() {
		// Before the schemas are dropped (cleanups run last first): what
		// the roles own goes with them.
		for _, r := range []string{ledgerRole, agentRole} {
			_, _ = ledger.Exec(context.Background(), `DROP OWNED BY `+r)
			_, _ = ledger.Exec(context.Background(), `DROP ROLE IF EXISTS `+r)
		}
	})
	for range 2 { // idempotent: the second run changes nothing and fails nothing
		require.NoError(t, migrate.EnsureOwner(ctx, ledger, migrate.Owner{Role: ledgerRole, Password: "secret-" + ledgerRole}))
		require.NoError(t, migrate.EnsureOwner(ctx, agent, migrate.Owner{Role: agentRole, Password: "it's-" + agentRole}))
	}

	var owners []string
	rows, err := ledger.Query(ctx, `SELECT c.relname || '=' || pg_get_userbyid(c.relowner) FROM pg_class c
		WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'S') ORDER BY c.relname`, ledger.Schema())
	require.NoError(t, err)
	for rows.Next() {
		var o string
		require.NoError(t, rows.Scan(&o))
		owners = append(owners, o)
	}
	rows.Close()
	require.Equal(t, []string{"schema_migrations=" + ledgerRole, "things=" + ledgerRole, "things_id_seq=" + ledgerRole,
		"tickets=" + ledgerRole}, owners, "the table, its sequence, the free sequence and the migrations' own table")

	asLedger := connectAs(t, ledgerRole, ledger.Schema())
	_, err = asLedger.Exec(ctx, `INSERT INTO things (v) VALUES ('mine')`)
	require.NoError(t, err, "the owner writes its own tables")
	var n int64
	require.NoError(t, asLedger.QueryRow(ctx, `SELECT nextval('tickets')`).Scan(&n))
	require.Equal(t, int64(1), n)
	_, err = asLedger.Exec(ctx, `CREATE TABLE later (id INT)`)
	require.NoError(t, err, "and creates in its own schema")

	asAgent := connectAs(t, agentRole, agent.Schema())
	_, err = asAgent.Exec(ctx, `INSERT INTO things (v) VALUES ('agent''s own')`)
	require.NoError(t, err)
	var v string
	err = asAgent.QueryRow(ctx, `SELECT v FROM `+ledger.Schema()+`.things LIMIT 1`).Scan(&v)
	requireDenied(t, err, "the agent reading the ledger's table")
	_, err = asAgent.Exec(ctx, `UPDATE `+ledger.Schema()+`.things SET v = 'stolen'`)
	requireDenied(t, err, "the agent writing the ledger's table")
	_, err = asAgent.Exec(ctx, `CREATE TABLE `+ledger.Schema()+`.planted (id INT)`)
	requireDenied(t, err, "the agent creating in the ledger's schema")
	require.NoError(t, ledger.QueryRow(ctx, `SELECT v FROM things`).Scan(&v))
	require.Equal(t, "mine", v, "nothing of the ledger's changed")
}

func TestOwnerFromURL(t *testing.T) {
	t.Parallel()
	o, err := migrate.OwnerFromURL("postgres://foundry_ledger:s3cr%27t@db:5432/foundry?sslmode=require")
	require.NoError(t, err)
	require.Equal(t, migrate.Owner{Role: "foundry_ledger", Password: "s3cr't"}, o)
	_, err = migrate.OwnerFromURL("postgres://u:pw@[bad")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "pw", "the password is redacted")
}
