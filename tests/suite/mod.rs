//! Every integration suite, in folders that mirror `src/`.

mod builtins;
mod cards;
mod cli;
mod code_mode;
mod codegen;
mod config;
mod discovery;
mod egress;
mod frontends;
mod mcp;
mod pipeline;
mod policy;
mod process;
mod prompt;
mod protocol;
mod providers;
mod quickstart;
mod registry;
mod runtime;
mod spill;
mod tidy;
