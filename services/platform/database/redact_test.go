package database_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"URL password", "postgres://u:secret@db:5432/foundry", "postgres://u:xxxxx@db:5432/foundry"},
		{"URL without a password", "postgres://u@db/foundry?sslmode=disable", "postgres://u@db/foundry?sslmode=disable"},
		{"password query parameter", "postgres://u@db/foundry?password=secret&sslmode=require", "postgres://u@db/foundry?password=xxxxx&sslmode=require"},
		{"sslpassword query parameter", "postgresql://u@db/foundry?sslmode=verify-full&sslpassword=secret", "postgresql://u@db/foundry?sslmode=verify-full&sslpassword=xxxxx"},
		{"both at once", "postgres://u:secret@db/f?password=secret&sslpassword=secret", "postgres://u:xxxxx@db/f?password=xxxxx&sslpassword=xxxxx"},
		{"upper-case parameter", "postgres://db/f?PASSWORD=secret", "postgres://db/f?PASSWORD=xxxxx"},
		{"escaped password", "postgres://u:s%40cret@db/f", "postgres://u:xxxxx@db/f"},
		{"key=value password", "host=db user=u password=secret dbname=f", "host=db user=u password=xxxxx dbname=f"},
		{"key=value quoted password with spaces and escapes", `host=db password='se cr\'et' sslmode=require`, "host=db password=xxxxx sslmode=require"},
		{"key=value spaces around =", "host = db password = secret", "host = db password = xxxxx"},
		{"key=value sslpassword", "host=db sslpassword=secret sslkey=/k.pem", "host=db sslpassword=xxxxx sslkey=/k.pem"},
		{"unterminated quote", "host=db password='secret", "host=db password=xxxxx"},
		{"unparseable URL shows only the scheme", "postgres://u:secret@db:port/f", "postgres://xxxxx"},
		{"a SQLite path", "data/ledger.db", "data/ledger.db"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := database.Redact(tt.in)
			require.Equal(t, tt.want, got, "Redact(%q): got %q, want %q", tt.in, got, tt.want)
			require.NotContains(t, got, "secret", "no secret survives")
			require.NotContains(t, got, "cr\\'et")
		})
	}
}

func TestTargetRedactsQueryPasswords(t *testing.T) {
	t.Parallel()
	db, err := database.Open(context.Background(), database.Config{Schema: "ok",
		URL: "postgres://u:secret1@127.0.0.1:1/db?password=secret2&sslpassword=secret3&sslmode=disable"})
	require.NoError(t, err) // the pool connects lazily
	defer db.Close()
	require.NotContains(t, db.Target(), "secret", "got %s", db.Target())
	require.Contains(t, db.Target(), "127.0.0.1:1/db")
	require.Contains(t, db.Target(), "sslmode=disable", "the harmless parameters stay")
}
