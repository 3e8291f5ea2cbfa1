//! Integration tests of `spill`, through the real binary: results of every source spilled
//! with their value intact, `bash` streams kept whole, the dispatch-log stage, reading a
//! spill file back, the byte budget, faults, and cleanup at exit.

mod bash;
mod dispatch_log;
mod mcp;
mod results;
