package cli

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
)

// signerSecretEnv holds a freeze signer's secret when --secret-file does
// not name a file. The secret is never a flag's value: other users of the
// machine see a process's arguments.
const signerSecretEnv = "FOUNDRY_SIGNER_SECRET"

// --- incidents -----------------------------------------------------------------

func (e *env) incidentsCommand() *cobra.Command {
	return group("incidents", "The emergency freeze: freeze, unfreeze, status and the incident log",
		e.incidentsFreeze(), e.incidentsUnfreeze(), e.incidentsStatus(), withIDs(e.incidentsList(), "incidents.id"))
}

func (e *env) incidentsFreeze() *cobra.Command {
	var signer, secretFile string
	cmd := &cobra.Command{
		Use:   "freeze REASON --signer ID",
		Short: "Freeze every CC movement, as a freeze signer (FOUNDRY_SIGNERS)",
		Long: `Freeze every CC movement at once, as one of the ledger's freeze signers
(FOUNDRY_SIGNERS). The request is signed here with the signer's secret, read
from --secret-file or else FOUNDRY_SIGNER_SECRET (never from a flag's value,
which other users see in the process list): hex HMAC-SHA256 of
signer_id|issued_at|nonce|reason, with the current time and a new random
nonce. The ledger accepts it once, within 5 minutes of its clock. An
administrator unfreezes (foundry incidents unfreeze).`,
		Example: `  FOUNDRY_SIGNER_SECRET="$(cat ops.secret)" foundry incidents freeze "treasury keys may be compromised" --signer ops`,
		Args:    args("REASON"),
	}
	cmd.RunE = e.action(func(ctx context.Context, a []string) error {
		if strings.TrimSpace(signer) == "" {
			return usagef("--signer is required")
		}
		secret, err := e.signerSecret(secretFile)
		if err != nil {
			return err
		}
		req, err := signFreeze(signer, secret, a[0], time.Now())
		if err != nil {
			return err
		}
		raw, err := e.client.call(ctx, opFreeze, req, &ledgerv1.FreezeResponse{}, callOpts{})
		return e.object(raw, err)
	})
	f := cmd.Flags()
	f.StringVar(&signer, "signer", "", "the signer's id in FOUNDRY_SIGNERS (required)")
	f.StringVar(&secretFile, "secret-file", "", "a file holding the signer's secret (default: $"+signerSecretEnv+")")
	return cmd
}

// signerSecret reads the signer's secret from file (spaces and a final
// newline around it are not part of it, as the ledger reads
// FOUNDRY_SIGNERS), else from the environment.
func (e *env) signerSecret(file string) (string, error) {
	secret := e.getenv(signerSecretEnv)
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return "", usagef("--secret-file: %v", err)
		}
		secret = string(raw)
	}
	secret = strings.TrimSpace(secret)
	if secret == "" {
		return "", usagef("the signer's secret is needed: --secret-file FILE or %s", signerSecretEnv)
	}
	return secret, nil
}

// signFreeze builds a freeze signed at now with a new random nonce.
func signFreeze(signer, secret, reason string, now time.Time) (*ledgerv1.FreezeRequest, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	req := &ledgerv1.FreezeRequest{SignerId: signer, IssuedAt: now.UTC().Format(time.RFC3339), Nonce: hex.EncodeToString(b),
		Reason: reason}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(req.GetSignerId() + "|" + req.GetIssuedAt() + "|" + req.GetNonce() + "|" + req.GetReason()))
	req.Signature = hex.EncodeToString(m.Sum(nil))
	return req, nil
}

func (e *env) incidentsUnfreeze() *cobra.Command {
	req := &ledgerv1.UnfreezeRequest{}
	cmd := &cobra.Command{
		Use:   "unfreeze",
		Short: "Lift the freeze (administrator; the reserve ratio must be at least 1.0)",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		raw, err := e.client.call(ctx, opUnfreeze, req, &ledgerv1.UnfreezeResponse{}, callOpts{})
		return e.object(raw, err)
	})
	cmd.Flags().StringVar(&req.Reason, "reason", "", "why (default: unfrozen by an administrator)")
	return cmd
}

func (e *env) incidentsStatus() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the economy's mode, the oracle breaker, the reserve ratio and the audit chain",
		Args:  cobra.NoArgs,
	}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		raw, err := e.client.call(ctx, opIncidentStatus, &ledgerv1.GetIncidentStatusRequest{}, &ledgerv1.GetIncidentStatusResponse{}, callOpts{})
		return e.object(raw, err)
	})
	return cmd
}

func (e *env) incidentsList() *cobra.Command {
	var limit, offset int32
	cmd := &cobra.Command{Use: "list", Short: "List incidents, newest first", Args: cobra.NoArgs}
	cmd.RunE = e.action(func(ctx context.Context, _ []string) error {
		req := &ledgerv1.ListIncidentsRequest{Offset: offset}
		if cmd.Flags().Changed("limit") {
			req.Limit = proto.Int32(limit)
		}
		resp := &ledgerv1.ListIncidentsResponse{}
		raw, err := e.client.call(ctx, opListIncidents, req, resp, callOpts{})
		if err != nil || e.machine() {
			return e.orJSON(raw, err)
		}
		e.pageHint("incidents", len(resp.GetIncidents()), resp.GetPagination(), false)
		rows := make([][]string, len(resp.GetIncidents()))
		for i, in := range resp.GetIncidents() {
			rows[i] = []string{in.GetCreatedAt(), in.GetKind(), in.GetSeverity(), in.GetActor(), truncate(in.GetDetail(), 80)}
		}
		return e.table([]string{"CREATED", "KIND", "SEVERITY", "ACTOR", "DETAIL"}, rows)
	})
	cmd.Flags().Int32Var(&limit, "limit", 0, "incidents per page (server default 50, at most 500)")
	cmd.Flags().Int32Var(&offset, "offset", 0, "incidents to skip")
	return cmd
}
