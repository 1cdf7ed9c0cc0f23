//! mTLS from the certificates directory Crossplane mounts (`tls.crt`, `tls.key`, `ca.crt`).

use super::{PemProblem, StartError};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::time::Duration;
use tonic::transport::{Certificate, Identity, ServerTlsConfig};

/// A peer that opens TCP but does not finish the handshake is dropped after this long; a real
/// handshake on a cluster network takes milliseconds.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Reads and checks the three files. The versions are rustls's: TLS 1.2 and 1.3, nothing older.
/// Client certificates are required and verified against `ca.crt`, as the Go SDK's
/// `RequireAndVerifyClientCert`.
pub(super) fn load(dir: &Path) -> Result<ServerTlsConfig, StartError> {
    let cert = read(dir, "tls.crt", check_certificates)?;
    let key = read(dir, "tls.key", check_private_key)?;
    let ca = read(dir, "ca.crt", check_certificates)?;
    Ok(ServerTlsConfig::new()
        .identity(Identity::from_pem(cert, key))
        .client_ca_root(Certificate::from_pem(ca))
        .client_auth_optional(false)
        .timeout(HANDSHAKE_TIMEOUT))
}

/// tonic parses the PEM only when the server is built and does not say which file was wrong;
/// checking here lets the error name the file.
fn read(
    dir: &Path,
    name: &str,
    check: fn(&[u8]) -> Result<(), PemProblem>,
) -> Result<Vec<u8>, StartError> {
    let path = dir.join(name);
    let bytes = std::fs::read(&path).map_err(|source| StartError::CertFile {
        path: path.clone(),
        source,
    })?;
    check(&bytes).map_err(|problem| StartError::CertContent { path, problem })?;
    Ok(bytes)
}

fn check_certificates(pem: &[u8]) -> Result<(), PemProblem> {
    let mut count = 0;
    for item in CertificateDer::pem_slice_iter(pem) {
        item.map_err(|e| PemProblem::Invalid(e.to_string()))?;
        count += 1;
    }
    match count {
        0 => Err(PemProblem::NoCertificate),
        _ => Ok(()),
    }
}

fn check_private_key(pem: &[u8]) -> Result<(), PemProblem> {
    PrivateKeyDer::from_pem_slice(pem)
        .map(drop)
        .map_err(|e| PemProblem::NoPrivateKey(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_certificate_file_is_refused() {
        let problem = check_certificates(b"").unwrap_err();
        assert_eq!(problem.to_string(), "holds no PEM CERTIFICATE block");
    }

    #[test]
    fn key_file_without_key_is_refused() {
        let problem = check_private_key(b"not a key").unwrap_err().to_string();
        assert!(problem.starts_with("holds no usable PEM private key"));
    }
}
