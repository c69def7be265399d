package database

import "testing"

func TestRebind(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT * FROM t WHERE a = $1 AND b = $12", "SELECT * FROM t WHERE a = ?1 AND b = ?12"},
		{"SELECT '$1', \"$2\" FROM t WHERE c = $3", "SELECT '$1', \"$2\" FROM t WHERE c = ?3"},
		{"SELECT 'it''s $1' WHERE x = $1", "SELECT 'it''s $1' WHERE x = ?1"},
		{"SELECT $$", "SELECT $$"},
	}
	for _, tt := range tests {
		if got := rebind(tt.in); got != tt.want {
			t.Errorf("rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPlaceholders(t *testing.T) {
	t.Parallel()
	if got, want := Placeholders(3, 3), "$3, $4, $5"; got != want {
		t.Errorf("Placeholders(3, 3) = %q, want %q", got, want)
	}
}
