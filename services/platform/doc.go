// Package platform is the runtime kit every Foundry service shares: see its
// sub-packages (app, config, database, migrate, grpcserver, grpcerr, fault,
// rpcmeta, clientip, ratelimit, clock, logging).
package platform
