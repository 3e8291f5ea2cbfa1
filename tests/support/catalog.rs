//! The tool catalog of the discovery tests and bench (`tests/tool-catalog/`): realistic MCP
//! tools as definitions, labeled queries, and an in-process runtime that serves them.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use dsh_tools::ToolRuntime;
use dsh_tools::code_mode::CodeMode;
use dsh_tools::tool::{BodyOutput, ToolDefinition, ToolRunContext};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;

/// One catalog tool: its registered name, description and input schema.
#[derive(Clone, Debug)]
pub struct CatalogTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// The catalog and its labeled queries.
pub struct Catalog {
    pub tools: Vec<CatalogTool>,
    /// `(query, relevant tool names)`: the tuning set (`queries.json`).
    pub queries: Vec<(String, Vec<String>)>,
    /// The held-out paraphrases (`paraphrases.json`), never used to tune the ranking.
    pub paraphrases: Vec<(String, Vec<String>)>,
}

fn read(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tool-catalog")
        .join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The labeled queries of `file`.
fn labeled(file: &str) -> Vec<(String, Vec<String>)> {
    read(file)["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|query| {
            let relevant = query["relevant"].as_array().unwrap();
            (
                query["query"].as_str().unwrap().to_string(),
                relevant
                    .iter()
                    .map(|r| r.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

impl Catalog {
    pub fn load() -> Catalog {
        let tools = read("tools.json");
        let mut catalog = Catalog {
            tools: Vec::new(),
            queries: labeled("queries.json"),
            paraphrases: labeled("paraphrases.json"),
        };
        for (server, listed) in tools["servers"].as_object().unwrap() {
            for tool in listed.as_array().unwrap() {
                catalog.tools.push(catalog_tool(server, tool));
            }
        }
        catalog
    }

    /// `count` tools: the catalog repeated under numbered server names
    /// (`mcp__github_2__create_issue`, ...), as a host with many similar servers has.
    pub fn multiplied(&self, count: usize) -> Vec<CatalogTool> {
        (0..count)
            .map(|i| {
                let tool = &self.tools[i % self.tools.len()];
                let copy = i / self.tools.len();
                let mut tool = tool.clone();
                if copy > 0 {
                    let (server, rest) = tool.name["mcp__".len()..].split_once("__").unwrap();
                    tool.name = format!("mcp__{server}_{copy}__{rest}");
                }
                tool
            })
            .collect()
    }
}

/// `mcp__<server>__<name>` with string parameters described as listed.
fn catalog_tool(server: &str, tool: &Value) -> CatalogTool {
    let mut properties = Map::new();
    for (name, description) in tool["parameters"].as_object().unwrap() {
        properties.insert(
            name.clone(),
            json!({ "type": "string", "description": description }),
        );
    }
    CatalogTool {
        name: format!("mcp__{server}__{}", tool["name"].as_str().unwrap()),
        description: tool["description"].as_str().unwrap().to_string(),
        input_schema: json!({ "type": "object", "properties": properties }),
    }
}

/// The definition of a catalog tool (its body answers `"ok"`).
pub fn definition(tool: &CatalogTool) -> ToolDefinition {
    ToolDefinition::builder(tool.name.as_str())
        .description(tool.description.as_str())
        .input_schema(tool.input_schema.clone())
        .output(json!({ "type": "string" }))
        .body(|_: ToolRunContext| async { Ok(BodyOutput::from(json!("ok"))) })
        .unwrap()
}

/// A runtime configured by `config` (a `HostConfig` JSON) with Code Mode, `search_tools`
/// and `tools` registered globally.
pub fn runtime(tools: &[CatalogTool], config: Value) -> Arc<ToolRuntime> {
    let config = dsh_tools::config::parse(config).unwrap();
    let runtime = ToolRuntime::new(&config);
    let code = CodeMode::install(&runtime, config.code_runtime.clone()).unwrap();
    dsh_tools::discovery::install(&runtime, &code).unwrap();
    for tool in tools {
        runtime.register(definition(tool), None).unwrap();
    }
    runtime
}
