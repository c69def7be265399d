// Package platform is the runtime kit every Foundry service shares. Its
// sub-packages, by what a service needs them for:
//
// Running a process:
//   - app: modules (a service, or the gateway) and the process that runs any
//     set of them, with their flags, database, gRPC server and loops;
//   - config: settings as flags with environment overrides;
//   - logging, observability: the zap logger, tracing and the fields that
//     tie a log line to its request;
//   - periodic: background work on an interval;
//   - lease: one leader among a service's replicas, by a lease row.
//
// Serving gRPC:
//   - grpcserver: the one gRPC server of a process and its client options;
//   - servicecred: only Foundry's own parts may call a service;
//   - authz: the caller, the roles and every RPC's policy, and the
//     signature that binds a forwarded principal to the gateways;
//   - notekey: Ed25519 keys in signed-note form (the gateways', the audit
//     log's) and the verifier key each implies;
//   - grpcerr, fault: domain failures and the one table to gRPC codes;
//   - rpcmeta, requestid, clientip: the request's metadata, id and address;
//   - ratelimit: per-key token buckets;
//   - idempotency: a retried request answered with its first response;
//   - wire: how every API writes a time and a word of a shared vocabulary
//     (an enum), and the one table from gRPC codes to HTTP statuses, which
//     the gateway and the CLI both read.
//
// Storing:
//   - database: one query interface over Postgres and embedded SQLite (with
//     the engines' row locks, ForUpdate and SkipLocked);
//   - migrate: each service's embedded schema migrations;
//   - uow: the unit of work every use-case layer is built on (a
//     transaction over fresh repositories, reads over the pool, the time
//     records carry);
//   - clock: time that tests can move.
package platform
