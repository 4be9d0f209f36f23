//! Model providers: the only part of the crate that talks to the network or
//! runs other programs. Real models (litellm-rs API providers and the
//! codex / gemini / claude CLIs) answer the same role traits as the offline
//! engine (`model_roles`), behind one `Provider` trait (`completion`). Every
//! call goes through `client::ModelClient` (redaction, concurrency limit,
//! timeout, deadline, retries, recording). The pipeline never knows which
//! backend answers.

pub mod cli;
pub mod client;
pub mod completion;
pub mod fake;
pub mod http_chat;
pub mod limit;
pub mod litellm;
pub mod model_name;
pub mod model_roles;
pub mod model_run;
pub mod parse;
pub mod plan;
pub mod prompts;
pub mod record;
pub mod redact;
pub mod retry;
pub mod selection;
pub mod settings;

pub use completion::{Completion, CompletionRequest, Provider, ProviderError};
pub use model_name::{ModelName, ProviderKind};
pub use model_run::ModelRun;
pub use settings::ModelSettings;
