//! The codec of the generated clients and servers (the tests' and benchmarks' clients; `serve`
//! answers through `service.rs`): tonic-prost's, except that a message reserves its exact
//! length before it is written.
//!
//! tonic hands the encoder a buffer of 8 KiB that grows by doubling as prost writes into it: a
//! response of 90 kB (100 repositories) was copied through five reallocations, about 100,000
//! instructions a call (BENCHMARKS.md). The length costs next to nothing to ask for first:
//! each `Struct` keeps its bytes from the first time it is measured (`proto::structpb`).

use prost::Message;
use std::marker::PhantomData;
use tonic::codec::{BufferSettings, EncodeBuf};
use tonic::Status;
use tonic_prost::ProstDecoder;

/// Named by the generated client and server (`codec_path` in `codegen::proto`).
#[derive(Debug, Clone)]
pub struct Codec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec(PhantomData)
    }
}

impl<T, U> tonic::codec::Codec for Codec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = Encoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        Encoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstDecoder::default()
    }
}

/// Writes a message into a buffer grown once to its exact length.
#[derive(Debug, Clone)]
pub struct Encoder<T>(PhantomData<T>);

impl<T: Message> tonic::codec::Encoder for Encoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        buf.reserve(item.encoded_len());
        // What `Message::encode` does after checking the room left, which a growable buffer
        // always has.
        item.encode_raw(buf);
        Ok(())
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::default()
    }
}
