//! Why the server did not start (or stopped on its own), in words that say what to do.

use std::io;
use std::path::PathBuf;
use thiserror::Error;

/// A failure to start serving, or of the transport once started.
#[derive(Debug, Error)]
pub enum StartError {
    /// Neither `--insecure` nor a certificates directory: Crossplane dials with mTLS, so serving
    /// plain text by accident would only fail later and less clearly.
    #[error(
        "no TLS credentials: supply --tls-certs-dir (or TLS_SERVER_CERTS_DIR) or use --insecure; \
         the directory must hold tls.crt, tls.key and ca.crt, and --insecure (plain-text gRPC) \
         is for development only"
    )]
    NoCredentials,
    /// A file of the certificates directory is missing or unreadable.
    #[error(
        "cannot read {}: {source}; the certificates directory must hold tls.crt, tls.key and \
         ca.crt (Crossplane mounts them at /tls/server)",
        .path.display()
    )]
    CertFile {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        source: io::Error,
    },
    /// A file of the certificates directory holds no usable PEM content.
    #[error(
        "{} {problem}; supply PEM files (tls.crt: the server certificate chain, tls.key: its \
         private key, ca.crt: the CA that signs Crossplane's client certificate)",
        .path.display()
    )]
    CertContent {
        /// The file.
        path: PathBuf,
        /// What is wrong with its content.
        problem: PemProblem,
    },
    /// The files parse but do not make a TLS configuration (e.g. the key is not the cert's).
    #[error(
        "the TLS files in {} do not form a server configuration: {}; check that tls.key is the \
         private key of tls.crt and that ca.crt holds a CA certificate",
        .dir.display(),
        error_chain(.source)
    )]
    Tls {
        /// The certificates directory.
        dir: PathBuf,
        /// What tonic refused.
        source: tonic::transport::Error,
    },
    /// The listen address cannot be bound.
    #[error("cannot listen on {address}: {source}; pass a free HOST:PORT with --address")]
    Bind {
        /// The address asked for.
        address: String,
        /// Why it cannot be bound.
        source: io::Error,
    },
    /// The operating system gave no random bytes for the content hashes' seed.
    #[error("cannot draw the content hashes' seed from the operating system's random source: {0}")]
    Random(getrandom::Error),
    /// A content hash was made before the seed was drawn (a bug of the server's start).
    #[error(transparent)]
    Keyed(#[from] crate::proto::hash_key::AlreadyKeyed),
    /// The process cannot set up its runtime or signal handlers.
    #[error("cannot start the runtime: {0}")]
    Runtime(#[source] io::Error),
    /// The transport failed after it started.
    #[error("the server stopped: {}", error_chain(.0))]
    Serve(#[source] tonic::transport::Error),
}

/// What is wrong with the content of a file of the certificates directory; the message
/// follows the file's name ("tls.key holds no usable PEM private key (...)").
#[derive(Debug, Error)]
pub enum PemProblem {
    /// A block does not parse.
    #[error("is not valid PEM ({0})")]
    Invalid(String),
    /// A certificate file without a certificate.
    #[error("holds no PEM CERTIFICATE block")]
    NoCertificate,
    /// A key file without a key.
    #[error("holds no usable PEM private key ({0})")]
    NoPrivateKey(String),
}

/// tonic's transport error says only "transport error"; the cause is in its sources.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut next = error.source();
    while let Some(cause) = next {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        next = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_credentials_says_what_to_do() {
        let text = StartError::NoCredentials.to_string();
        assert!(text.contains("supply --tls-certs-dir (or TLS_SERVER_CERTS_DIR) or use --insecure"));
    }

    #[test]
    fn cert_file_names_the_file() {
        let error = StartError::CertFile {
            path: PathBuf::from("/tls/server/tls.key"),
            source: io::Error::from(io::ErrorKind::NotFound),
        };
        assert!(error
            .to_string()
            .starts_with("cannot read /tls/server/tls.key: "));
    }
}
