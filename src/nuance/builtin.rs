//! The nuance files gauntlet ships with, embedded with `include_str!`
//! (a unit test checks they match `nuances/`), the identifiers that detect
//! each built-in technology, and the offline checks.

use serde::Deserialize;
use std::sync::OnceLock;

macro_rules! nuance_files {
    ($($name:literal),* $(,)?) => {
        /// Built-in nuance files: (path as shown in citations, contents).
        pub const FILES: &[(&str, &str)] = &[
            $((concat!("nuances/", $name), include_str!(concat!("../../nuances/", $name))),)*
        ];
    };
}

nuance_files!(
    "aws-lambda.md",
    "celery.md",
    "cloudflare-workers.md",
    "dynamodb.md",
    "elasticsearch.md",
    "etcd.md",
    "graphql.md",
    "grpc.md",
    "kafka.md",
    "kubernetes.md",
    "mongodb.md",
    "mysql.md",
    "nextjs.md",
    "postgresql.md",
    "prisma.md",
    "rabbitmq.md",
    "redis.md",
    "s3.md",
    "sidekiq.md",
    "sqlite.md",
    "sqs.md",
    "stripe.md",
);

/// Which names and identifiers detect each built-in technology.
pub const TECHNOLOGIES: (&str, &str) = (
    "nuances/technologies.toml",
    include_str!("../../nuances/technologies.toml"),
);

/// The offline checks some nuances carry.
pub const CHECKS: (&str, &str) = (
    "nuances/checks.toml",
    include_str!("../../nuances/checks.toml"),
);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TechnologiesFile {
    technology: Vec<TechnologyDef>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TechnologyDef {
    name: String,
    identifiers: Vec<String>,
}

fn table() -> &'static Vec<(String, Vec<String>)> {
    static TABLE: OnceLock<Vec<(String, Vec<String>)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        // Embedded data, checked by a unit test: it always parses.
        let f: TechnologiesFile = toml::from_str(TECHNOLOGIES.1).unwrap_or(TechnologiesFile {
            technology: Vec::new(),
        });
        f.technology
            .into_iter()
            .map(|t| (super::key(&t.name), t.identifiers))
            .collect()
    })
}

/// The built-in identifiers for a technology key, if it has any.
pub fn identifiers(key: &str) -> Option<Vec<String>> {
    table()
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, ids)| ids.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_files_match_the_folder() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("nuances");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md") && n != "README.md")
            .collect();
        on_disk.sort();
        let mut embedded: Vec<String> = FILES
            .iter()
            .map(|(p, _)| p.trim_start_matches("nuances/").to_string())
            .collect();
        embedded.sort();
        assert_eq!(embedded, on_disk, "every nuances/*.md is embedded");
        for (path, text) in FILES.iter().chain([&TECHNOLOGIES, &CHECKS]) {
            let disk =
                std::fs::read_to_string(dir.join(path.trim_start_matches("nuances/"))).unwrap();
            assert_eq!(*text, disk, "{path} is embedded as on disk");
        }
    }

    #[test]
    fn every_builtin_technology_has_identifiers_and_nuances() {
        let f: TechnologiesFile = toml::from_str(TECHNOLOGIES.1).unwrap();
        let set = crate::nuance::load(&Default::default()).unwrap().unwrap();
        assert!(set.technologies.len() >= 20, "{}", set.technologies.len());
        for t in &set.technologies {
            assert!(
                f.technology
                    .iter()
                    .any(|d| super::super::key(&d.name) == t.key),
                "{} has no identifiers in technologies.toml",
                t.name
            );
            assert!(
                t.nuances.len() >= 4,
                "{} has only {} nuances",
                t.name,
                t.nuances.len()
            );
            for n in &t.nuances {
                assert!(
                    n.text.contains("Source:"),
                    "{}:{} cites no source",
                    n.source,
                    n.line
                );
            }
        }
        for d in &f.technology {
            assert!(
                set.technology(&d.name).is_some(),
                "{} has no nuance file",
                d.name
            );
            assert!(!d.identifiers.is_empty());
            for id in &d.identifiers {
                assert_eq!(id, &id.to_lowercase(), "identifiers are lowercase: {id}");
            }
        }
    }
}
