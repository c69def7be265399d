package database

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeyset(t *testing.T) {
	t.Parallel()
	require.Equal(t, "(created_at <= $3 AND (created_at < $3 OR id < $4))", Keyset("<", "<", 3, 4))
	require.Equal(t, "(created_at >= $1 AND (created_at > $1 OR id >= $2))", Keyset(">", ">=", 1, 2))
}
