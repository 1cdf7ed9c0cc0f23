//! Why the server did not start (or stopped on its own), in words that say what to do.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// A failure to start serving, or of the transport once started.
#[derive(Debug)]
pub enum StartError {
    /// Neither `--insecure` nor a certificates directory: Crossplane dials with mTLS, so serving
    /// plain text by accident would only fail later and less clearly.
    NoCredentials,
    /// A file of the certificates directory is missing or unreadable.
    CertFile { path: PathBuf, source: io::Error },
    /// A file of the certificates directory holds no usable PEM content.
    CertContent { path: PathBuf, problem: String },
    /// The files parse but do not make a TLS configuration (e.g. the key is not the cert's).
    Tls {
        dir: PathBuf,
        source: tonic::transport::Error,
    },
    /// The listen address cannot be bound.
    Bind { address: String, source: io::Error },
    /// The process cannot set up its runtime or signal handlers.
    Runtime(io::Error),
    /// The transport failed after it started.
    Serve(tonic::transport::Error),
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoCredentials => write!(
                f,
                "no TLS credentials: supply --tls-certs-dir (or TLS_SERVER_CERTS_DIR) or use \
                 --insecure; the directory must hold tls.crt, tls.key and ca.crt, and --insecure \
                 (plain-text gRPC) is for development only"
            ),
            Self::CertFile { path, source } => write!(
                f,
                "cannot read {}: {source}; the certificates directory must hold tls.crt, tls.key \
                 and ca.crt (Crossplane mounts them at /tls/server)",
                path.display()
            ),
            Self::CertContent { path, problem } => write!(
                f,
                "{} {problem}; supply PEM files (tls.crt: the server certificate chain, tls.key: \
                 its private key, ca.crt: the CA that signs Crossplane's client certificate)",
                path.display()
            ),
            Self::Tls { dir, source } => write!(
                f,
                "the TLS files in {} do not form a server configuration: {}; check that tls.key \
                 is the private key of tls.crt and that ca.crt holds a CA certificate",
                dir.display(),
                error_chain(source)
            ),
            Self::Bind { address, source } => write!(
                f,
                "cannot listen on {address}: {source}; pass a free HOST:PORT with --address"
            ),
            Self::Runtime(source) => write!(f, "cannot start the runtime: {source}"),
            Self::Serve(source) => write!(f, "the server stopped: {}", error_chain(source)),
        }
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::CertFile { source, .. } | Self::Bind { source, .. } | Self::Runtime(source) => {
                Some(source)
            }
            Self::Tls { source, .. } | Self::Serve(source) => Some(source),
            Self::NoCredentials | Self::CertContent { .. } => None,
        }
    }
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
