//! Arbitrary bytes as a RunFunctionRequest, as they arrive in a gRPC message: decoding never
//! panics, and a request that decodes gets a response with its tag, the same bytes each time.
#![no_main]

use function_artifactory::proto::v1::RunFunctionRequest;
use libfuzzer_sys::fuzz_target;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = RunFunctionRequest::decode(data) {
        function_artifactory_fuzz::check(&request);
    }
});
