package database_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
)

func TestConversions(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 30, 0, 123456000, time.FixedZone("CET", 3600))
	require.Equal(t, at.UTC(), database.Time(database.Micros(at)), "round-trips to the microsecond, in UTC")
	require.Equal(t, time.UTC, database.Time(0).Location())
	require.Nil(t, database.NullMicros(time.Time{}))
	require.Equal(t, at.UnixMicro(), *database.NullMicros(at))
	require.Nil(t, database.NullString(""))
	require.Equal(t, "x", *database.NullString("x"))
}
