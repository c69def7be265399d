package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/foundryhq/foundry/services/platform/database"
)

// Owner is the database role a service connects as on Postgres: the owner
// of its schema and of everything in it, and nothing else. The migration
// (run by a role that may create roles) makes it so; the service itself
// then connects with Owner's credentials, so "each service owns its
// schema" is the database's rule, not a convention: a compromised pod of
// one service cannot read or write another's tables.
type Owner struct {
	// Role is the login role's name.
	Role string
	// Password is set on the role on every run (so rotating it is a change
	// of the Secret and a run of the migration Job); empty leaves the
	// role's password as it is.
	Password string
}

// OwnerFromURL is the role and password of a Postgres connection URL (the
// user as libpq would read it: the URL's, else PGUSER, else the OS user).
func OwnerFromURL(url string) (Owner, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		// Not wrapped: the parser's message may quote the URL, password
		// and all.
		return Owner{}, fmt.Errorf("the service's database URL %s does not parse", database.Redact(url))
	}
	return Owner{Role: cfg.User, Password: cfg.Password}, nil
}

// EnsureOwner makes o's role the owner of db's schema and of every table,
// view and free-standing sequence in it, and takes the schema's rights
// away from PUBLIC: the role is created (LOGIN, o.Password) when missing,
// and the migrating role becomes its member when it must be one to hand it
// objects (Postgres 16 asks that of roles that are not superusers). Run it
// after Up, as the role that ran Up; it is idempotent, and serialized with
// Up by the schema's migration lock.
//
// On SQLite there are no roles: it is an error to ask for one.
func EnsureOwner(ctx context.Context, db *database.DB, o Owner) error {
	if db.Engine() != database.Postgres {
		return errors.New("a schema owner role needs Postgres: SQLite has no roles")
	}
	if o.Role == "" {
		return errors.New("no owner role given")
	}
	role := pgx.Identifier{o.Role}.Sanitize()
	schema := pgx.Identifier{db.Schema()}.Sanitize()
	return db.Tx(ctx, func(tx database.Querier) error {
		if err := lock(ctx, tx, db.Schema()); err != nil {
			return err
		}
		var exists, superuser, member bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1),
			(SELECT rolsuper FROM pg_roles WHERE rolname = current_user)`, o.Role).Scan(&exists, &superuser); err != nil {
			return fmt.Errorf("look up role %s: %w", o.Role, err)
		}
		// CREATE and ALTER ROLE take no parameters: the password is a
		// quoted literal (standard_conforming_strings is on by default
		// since Postgres 9.1, so doubling quotes is the whole escape).
		password := ""
		if o.Password != "" {
			password = " PASSWORD '" + strings.ReplaceAll(o.Password, "'", "''") + "'"
		}
		verb := "ALTER"
		if !exists {
			verb = "CREATE"
		}
		if _, err := tx.Exec(ctx, verb+` ROLE `+role+` WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE`+password); err != nil {
			return fmt.Errorf("%s role %s: %w", strings.ToLower(verb), o.Role, err)
		}
		if !superuser {
			if err := tx.QueryRow(ctx, `SELECT pg_has_role(current_user, $1, 'SET')`, o.Role).Scan(&member); err != nil {
				return fmt.Errorf("check membership of %s: %w", o.Role, err)
			}
			if !member {
				if _, err := tx.Exec(ctx, `GRANT `+role+` TO CURRENT_USER`); err != nil {
					return fmt.Errorf("join role %s to hand it the schema: %w", o.Role, err)
				}
			}
		}
		if _, err := tx.Exec(ctx, `ALTER SCHEMA `+schema+` OWNER TO `+role); err != nil {
			return fmt.Errorf("give schema %s to %s: %w", db.Schema(), o.Role, err)
		}
		// Tables first: a table's owned sequences follow it, and Postgres
		// refuses to change their owner on their own.
		rows, err := tx.Query(ctx, `SELECT c.relname, c.relkind = 'S' FROM pg_class c
			WHERE c.relnamespace = $1::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'S')
				AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = $2)
				AND NOT (c.relkind = 'S' AND EXISTS (SELECT 1 FROM pg_depend d
					WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i')))
			ORDER BY c.relkind = 'S', c.relname`, db.Schema(), o.Role)
		if err != nil {
			return fmt.Errorf("list the objects of schema %s: %w", db.Schema(), err)
		}
		type object struct {
			name     string
			sequence bool
		}
		var objects []object
		for rows.Next() {
			var ob object
			if err := rows.Scan(&ob.name, &ob.sequence); err != nil {
				rows.Close()
				return err
			}
			objects = append(objects, ob)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, ob := range objects {
			kind := "TABLE" // ALTER TABLE also takes views and materialized views
			if ob.sequence {
				kind = "SEQUENCE"
			}
			if _, err := tx.Exec(ctx, `ALTER `+kind+` `+schema+`.`+pgx.Identifier{ob.name}.Sanitize()+` OWNER TO `+role); err != nil {
				return fmt.Errorf("give %s.%s to %s: %w", db.Schema(), ob.name, o.Role, err)
			}
		}
		if _, err := tx.Exec(ctx, `REVOKE ALL ON SCHEMA `+schema+` FROM PUBLIC`); err != nil {
			return fmt.Errorf("close schema %s to PUBLIC: %w", db.Schema(), err)
		}
		return nil
	})
}
