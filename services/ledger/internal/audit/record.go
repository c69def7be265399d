// Package audit is the ledger's hash-chained audit trail: the hash that
// chains an entry to its predecessor, the verifier that walks a chain and
// names the break point, the repairs that record breaks, and the Merkle
// tree and signed checkpoints of the log. It has no SQL: the store
// persists entries and the use cases append them in the same transaction
// as the movement they record.
//
// An entry's canonical encoding, and its leaf in the tree, are the log's
// record format, which clients check for themselves: they live in
// platform/auditlog, shared with foundry audit verify, and this package
// names them for the ledger's rules.
package audit

import "github.com/foundryhq/foundry/services/platform/auditlog"

// Entry is one audit record (auditlog.Entry).
type Entry = auditlog.Entry

// ErrNotCanonical reports bytes that are not the canonical encoding of any
// entry.
var ErrNotCanonical = auditlog.ErrNotCanonical

// GenesisRecord is record 0 of every log (auditlog.GenesisRecord).
var GenesisRecord = auditlog.GenesisRecord

// Encode returns the canonical encoding of e (auditlog.Encode).
func Encode(e Entry) []byte { return auditlog.Encode(e) }

// Decode reads an entry from its canonical encoding (auditlog.Decode).
func Decode(b []byte) (Entry, error) { return auditlog.Decode(b) }

// LeafHash is the tree's hash of a record (auditlog.LeafHash).
func LeafHash(record []byte) Hash { return auditlog.LeafHash(record) }

// Leaf is the tree's hash of the entry e, computed from its fields: the
// leaf its seq must hold (auditlog.Leaf).
func Leaf(e Entry) Hash { return auditlog.Leaf(e) }
