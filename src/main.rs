//! The `dsh-tools` binary: `serve` (default) speaks the wire protocol on stdio; `run`
//! executes one Code Mode program locally; `sdk` prints the generated SDK; `mcp` serves
//! the registry to MCP clients; `sandbox check` reports the OS sandbox. SIGTERM and SIGINT
//! shut every command down in order.

mod cli;

/// mimalloc for the whole process: with its `override` feature QuickJS's many small C
/// allocations take mimalloc's fast path too (`docs/performance.md` has the A/B).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::Context;
use clap::{Parser, Subcommand};
use dsh_tools::config;
use dsh_tools::frontends::rpc::{ServeOptions, serve};
use dsh_tools::transport::framing::Framing;
use dsh_tools::transport::stdio;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "dsh-tools",
    version,
    about = "Tool registry, execution pipeline and Code Mode over JSON-RPC on stdio"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    common: Common,
}

#[derive(clap::Args, Clone)]
struct Common {
    /// Host configuration (JSON or TOML), or Claude Code's `.mcp.json` / `settings.json`, or
    /// Codex's `config.toml`; repeatable, later files winning key by key;
    /// `initialize.config` is merged over them.
    #[arg(long, global = true)]
    config: Vec<PathBuf>,
    /// Enable built-in tools rooted at the current directory: `fs`, `bash`, `web` or a list
    /// (the same as `builtins.fs.root = "."` / `builtins.bash.cwd = "."` /
    /// `builtins.web = {}` in the config).
    #[arg(long, global = true, value_delimiter = ',')]
    builtins: Vec<String>,
    /// How MCP servers' elicitations are answered when no one is asked (`run` off a
    /// terminal, `mcp` for a client without the capability): `defaults` accepts a form
    /// with its schema's defaults, `decline` declines (also on a terminal).
    #[arg(long, global = true, value_name = "POLICY")]
    elicit: Option<cli::ElicitPolicy>,
    /// Log level for stderr (overridden by RUST_LOG).
    #[arg(long, global = true, default_value = "warn")]
    log_level: String,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the wire protocol on stdin/stdout (the default).
    Serve {
        /// `lsp` (Content-Length headers), `ndjson`, or `auto` (decided by the first byte).
        #[arg(long, default_value = "lsp")]
        framing: String,
    },
    /// Run one Code Mode program (`.py`: Python, `.ts`: TypeScript, else `codeRuntime.language`) against the configured tools.
    Run {
        /// The program: the body of an async function.
        file: PathBuf,
        /// Complete a remote MCP server's OAuth browser step by following the
        /// authorization URL's redirects (for authorization servers that approve without a
        /// person) instead of printing the URL and waiting for the redirect.
        #[arg(long)]
        oauth_headless: bool,
    },
    /// Print the Code Mode SDK for the configured tools.
    Sdk {
        /// `ts` / `typescript` or `py` / `python` (default: `codeRuntime.language`).
        #[arg(long)]
        lang: Option<String>,
    },
    /// Serve the registry to an MCP client over MCP's stdio transport.
    Mcp {
        /// `native`, `code` or `both` (default: the configured `tools.mode`).
        #[arg(long)]
        mode: Option<String>,
        /// Serve over Streamable HTTP on ADDR (`127.0.0.1:PORT`; port 0 picks one) at
        /// `/mcp`, to many clients, instead of stdio. The address and, unless
        /// `--http-token-env`, a generated bearer token are printed to stderr.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Allow a non-loopback `--http` address.
        #[arg(long, requires = "http")]
        http_allow_remote: bool,
        /// Take the bearer token from this environment variable instead of generating one.
        #[arg(long, value_name = "VAR", requires = "http")]
        http_token_env: Option<String>,
        /// Also accept the token bare in this request header (`X-Api-Key: <token>`), for
        /// clients that can send a fixed header but not `Authorization: Bearer`.
        #[arg(long, value_name = "NAME", requires = "http")]
        http_token_header: Option<String>,
        /// Let clients on loopback in without the token (any local user or process then
        /// can; browsers are still held off by the Origin check). Loopback binds only.
        #[arg(long, requires = "http")]
        http_no_auth_loopback: bool,
        /// A browser origin (`https://app.example:443`) allowed besides the loopback ones.
        #[arg(long, value_name = "ORIGIN", requires = "http")]
        http_allow_origin: Vec<String>,
        /// The `--http` server's limits.
        #[command(flatten)]
        http_limits: cli::HttpLimitArgs,
    },
    /// Sandbox diagnostics: `check` prints what the kernel supports and what each
    /// configured tool family would get (exit code 1 when one would refuse to start).
    Sandbox {
        #[command(subcommand)]
        action: SandboxAction,
    },
    /// The configuration the `--config` files make together.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// Write protocol/generated/ (JSON Schema and TypeScript declarations of the wire types).
    GenerateProtocol {
        /// Output directory.
        #[arg(long, default_value = "protocol/generated")]
        out: PathBuf,
    },
}

#[derive(Subcommand)]
enum ConfigAction {
    /// Print every configured value with the file it came from (secrets masked).
    Show,
}

#[derive(Subcommand)]
enum SandboxAction {
    /// Print the kernel's support and each family's effective sandbox.
    Check {
        /// Print the report as JSON (`initialize`'s `capabilities.sandbox`).
        #[arg(long)]
        json: bool,
    },
}

fn main() -> anyhow::Result<()> {
    dsh_tools::process::no_huge_pages_for_the_host();
    let ran = run();
    dsh_tools::process::remove_scratch_root();
    dsh_tools::process::remove_budget_root();
    match ran {
        // A reader that went away (`dsh-tools run … | head`) ends the output, as SIGPIPE
        // would end a C program: quietly, with 128 + SIGPIPE.
        Err(error) if is_broken_pipe(&error) => exit(141),
        other => other,
    }
}

/// Ends the process with `code`, removing the scratch dirs of calls still in flight (their
/// tasks are never dropped: the runtime is shut down in the background).
fn exit(code: i32) -> ! {
    dsh_tools::process::remove_scratch_root();
    dsh_tools::process::remove_budget_root();
    std::process::exit(code)
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_logging(&cli.common.log_level);
    // Non-dumpable: other processes of this user, children included, cannot open this
    // host's /proc entries (its environment, its fds: a child writing a forged message to
    // /proc/$PPID/fd/1) without CAP_SYS_PTRACE in its user namespace, which a sandboxed child
    // lacks. It also keeps core dumps, with whatever secrets memory holds, off the disk.
    if let Err(error) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!("could not mark the host non-dumpable: {error}");
    }
    let mut layers = config::Layers::default();
    for family in &cli.common.builtins {
        let enabled = match family.as_str() {
            "fs" => serde_json::json!({ "builtins": { "fs": { "root": "." } } }),
            "bash" => serde_json::json!({ "builtins": { "bash": { "cwd": "." } } }),
            "web" => serde_json::json!({ "builtins": { "web": {} } }),
            other => anyhow::bail!("--builtins: unknown family {other:?} (expected fs, bash, web)"),
        };
        layers.push("--builtins", enabled);
    }
    for path in &cli.common.config {
        layers.push_file(path)?;
    }
    let base_config = layers.merged();
    let parsed = layers.parse()?;
    let elicit = cli.common.elicit;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK_BYTES)
        .build()
        .context("starting the async runtime")?;
    match cli.command.unwrap_or(Command::Serve {
        framing: "lsp".into(),
    }) {
        Command::Serve { framing } => {
            let framing: Framing = framing
                .parse()
                .map_err(|e| anyhow::anyhow!("--framing: {e}"))?;
            let options = ServeOptions {
                framing,
                base_config,
                config: parsed,
            };
            let code = on_worker(&runtime, async {
                let stdin = cli::EofOnCancel::new(stdio::stdin(), cli::on_terminate());
                serve(stdin, stdio::stdout(), options).await
            })?;
            runtime.shutdown_background();
            exit(code);
        }
        Command::Run {
            file,
            oauth_headless,
        } => {
            if oauth_headless {
                dsh_tools::mcp::oauth::set_browser_step(
                    dsh_tools::mcp::oauth::BrowserStep::Headless,
                );
            }
            // The file's extension picks the language: `.py` runs as Python, `.ts` as TypeScript.
            let mut parsed = parsed;
            match file.extension().and_then(|e| e.to_str()) {
                Some("py") => {
                    parsed.code_runtime.language = dsh_tools_protocol::CodeLanguage::Python
                }
                Some("ts") => {
                    parsed.code_runtime.language = dsh_tools_protocol::CodeLanguage::Typescript;
                }
                _ => {}
            }
            let code = on_worker(&runtime, async move {
                cli::run_program(&file, &parsed, elicit, cli::on_terminate()).await
            })??;
            runtime.shutdown_background();
            exit(code);
        }
        Command::Sdk { lang } => {
            let language = match lang.as_deref() {
                None => parsed.code_runtime.language,
                Some("ts" | "typescript") => dsh_tools_protocol::CodeLanguage::Typescript,
                Some("py" | "python") => dsh_tools_protocol::CodeLanguage::Python,
                Some(other) => anyhow::bail!("--lang: expected ts or py, got {other:?}"),
            };
            let sdk = runtime.block_on(cli::sdk_text(&parsed, language))?;
            std::io::Write::write_all(&mut std::io::stdout(), format!("{sdk}\n").as_bytes())?;
            Ok(())
        }
        Command::Mcp {
            mode,
            http,
            http_allow_remote,
            http_token_env,
            http_token_header,
            http_no_auth_loopback,
            http_allow_origin,
            http_limits,
        } => {
            let access = cli::HttpAccess {
                token_env: http_token_env,
                token_header: http_token_header,
                no_auth_loopback: http_no_auth_loopback,
            };
            let mode = mode
                .map(|m| serde_json::from_value(serde_json::Value::String(m)))
                .transpose()
                .map_err(|e| anyhow::anyhow!("--mode: {e}"))?;
            let over_http = http
                .map(|addr| {
                    cli::http_options(
                        addr,
                        http_allow_remote,
                        &access,
                        http_allow_origin,
                        &http_limits,
                    )
                })
                .transpose()?;
            let served = on_worker(&runtime, async move {
                cli::serve_mcp(&parsed, mode, over_http, elicit, cli::on_terminate()).await
            })
            .and_then(|served| served);
            runtime.shutdown_background();
            served
        }
        Command::Sandbox {
            action: SandboxAction::Check { json },
        } => {
            let code = cli::sandbox::check(&parsed, json)?;
            exit(code);
        }
        Command::Config {
            action: ConfigAction::Show,
        } => {
            // Shown once it parses: every value printed is one the host would accept.
            std::io::Write::write_all(&mut std::io::stdout(), config::show(&layers).as_bytes())?;
            Ok(())
        }
        Command::GenerateProtocol { out } => {
            std::fs::create_dir_all(&out)?;
            let schema =
                serde_json::to_string_pretty(&dsh_tools_protocol::generate::json_schema_bundle())?;
            std::fs::write(out.join("protocol.schema.json"), schema + "\n")?;
            std::fs::write(
                out.join("protocol.d.ts"),
                dsh_tools_protocol::generate::typescript_declarations(),
            )?;
            Ok(())
        }
    }
}

/// Stack of every runtime thread: recursion over client JSON (serde's serializer, `Value`'s
/// clone and drop) needs room in proportion to `transport.maxNestingDepth`, whose maximum
/// the wire tests prove safe on these stacks.
const WORKER_STACK_BYTES: usize = 128 << 20;

/// Runs `work` as a task of `runtime`, on a worker's stack of [`WORKER_STACK_BYTES`] rather
/// than the main thread's, whose size is whatever `ulimit -s` gave the process.
fn on_worker<T: Send + 'static>(
    runtime: &tokio::runtime::Runtime,
    work: impl std::future::Future<Output = T> + Send + 'static,
) -> anyhow::Result<T> {
    runtime
        .block_on(runtime.spawn(work))
        .context("the host's main task failed")
}

fn init_logging(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}
