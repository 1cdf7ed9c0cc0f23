//! Step 1 of reading: libyaml's events become one tree of nodes per document, anchors resolved
//! as they are met (an alias to an anchor not yet seen is an error, as in go-yaml), collections
//! nested at most [`MAX_DEPTH`] deep.

use crate::events::{Collection, Event, Parser, Scalar};
use std::collections::HashMap;

/// How deep collections may nest in one document.
pub(super) const MAX_DEPTH: usize = 128;

pub(super) type NodeId = usize;

#[derive(Debug)]
pub(super) struct Node {
    pub(super) kind: Kind,
    /// The 1-based line the node starts on.
    pub(super) line: usize,
}

#[derive(Debug)]
pub(super) enum Kind {
    Scalar {
        /// Its text, in [`Tree::texts`].
        text: usize,
        tag: Option<String>,
        plain: bool,
        /// Under an anchor, so an alias may decode it again: its text is copied, not moved.
        shared: bool,
    },
    Sequence(Vec<NodeId>),
    /// Keys and values, alternating.
    Mapping(Vec<NodeId>),
    Alias {
        target: NodeId,
        name: String,
    },
}

/// One document's nodes; the root is the last one added at the top level.
#[derive(Debug, Default)]
pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
    /// The scalars' texts, apart so that decoding can move them into the values.
    pub(super) texts: Vec<String>,
    pub(super) root: Option<NodeId>,
}

/// The documents of a text as trees, at most `limit` of them (go-yaml's `Unmarshal` reads one
/// and parses nothing after it).
pub(super) fn parse(text: &str, limit: Option<usize>) -> Result<Vec<Tree>, String> {
    let mut builder = Builder {
        parser: Parser::new(text.as_bytes()),
        tree: Tree::default(),
        anchors: HashMap::new(),
        depth: 0,
        anchored: 0,
    };
    builder.expect_stream_start()?;
    let mut trees = Vec::new();
    loop {
        if limit.is_some_and(|limit| trees.len() >= limit) {
            return Ok(trees);
        }
        match builder.next()? {
            (Event::DocumentStart, _) => trees.push(builder.document()?),
            (Event::StreamEnd, _) => return Ok(trees),
            (other, _) => return Err(unexpected(&other)),
        }
    }
}

struct Builder<'a> {
    parser: Parser<'a>,
    tree: Tree,
    anchors: HashMap<String, NodeId>,
    depth: usize,
    /// How many anchored collections enclose the node being built.
    anchored: usize,
}

impl Builder<'_> {
    fn next(&mut self) -> Result<(Event, usize), String> {
        self.parser.next()
    }

    fn expect_stream_start(&mut self) -> Result<(), String> {
        match self.next()? {
            (Event::StreamStart, _) => Ok(()),
            (other, _) => Err(unexpected(&other)),
        }
    }

    /// A document after its start event, up to and with its end event.
    fn document(&mut self) -> Result<Tree, String> {
        self.anchors.clear();
        let (event, line) = self.next()?;
        let root = self.node(event, line)?;
        self.tree.root = Some(root);
        match self.next()? {
            (Event::DocumentEnd, _) => Ok(std::mem::take(&mut self.tree)),
            (other, _) => Err(unexpected(&other)),
        }
    }

    fn node(&mut self, event: Event, line: usize) -> Result<NodeId, String> {
        let line = line + 1;
        match event {
            Event::Scalar(Scalar {
                anchor,
                tag,
                value,
                plain,
            }) => {
                let shared = self.anchored > 0 || anchor.is_some();
                self.tree.texts.push(value);
                let text = self.tree.texts.len() - 1;
                let kind = Kind::Scalar {
                    text,
                    tag,
                    plain,
                    shared,
                };
                let id = self.add(kind, line);
                self.anchor(anchor, id);
                Ok(id)
            }
            Event::Alias(name) => {
                let Some(&target) = self.anchors.get(&name) else {
                    return Err(format!("yaml: unknown anchor '{name}' referenced"));
                };
                Ok(self.add(Kind::Alias { target, name }, line))
            }
            Event::SequenceStart(Collection { anchor }) => {
                let id = self.add(Kind::Sequence(Vec::new()), line);
                let children = self.anchored_children(anchor, id, Event::SequenceEnd, line)?;
                self.tree.nodes[id].kind = Kind::Sequence(children);
                Ok(id)
            }
            Event::MappingStart(Collection { anchor }) => {
                let id = self.add(Kind::Mapping(Vec::new()), line);
                let children = self.anchored_children(anchor, id, Event::MappingEnd, line)?;
                self.tree.nodes[id].kind = Kind::Mapping(children);
                Ok(id)
            }
            other => Err(unexpected(&other)),
        }
    }

    /// The children of a collection, which an anchor may name.
    fn anchored_children(
        &mut self,
        anchor: Option<String>,
        id: NodeId,
        end: Event,
        line: usize,
    ) -> Result<Vec<NodeId>, String> {
        let anchored = anchor.is_some();
        self.anchor(anchor, id);
        self.anchored += usize::from(anchored);
        let children = self.children(end, line);
        self.anchored -= usize::from(anchored);
        children
    }

    /// The nodes of a collection up to its end event.
    fn children(&mut self, end: Event, line: usize) -> Result<Vec<NodeId>, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep(line));
        }
        let mut children = Vec::new();
        loop {
            let (event, line) = self.next()?;
            if event == end {
                break;
            }
            children.push(self.node(event, line)?);
        }
        self.depth -= 1;
        Ok(children)
    }

    fn add(&mut self, kind: Kind, line: usize) -> NodeId {
        self.tree.nodes.push(Node { kind, line });
        self.tree.nodes.len() - 1
    }

    /// A later anchor of the same name replaces the earlier one for the aliases after it.
    fn anchor(&mut self, anchor: Option<String>, id: NodeId) {
        if let Some(name) = anchor {
            self.anchors.insert(name, id);
        }
    }
}

fn unexpected(event: &Event) -> String {
    format!("yaml: unexpected parse event {event:?}")
}

pub(super) fn too_deep(line: usize) -> String {
    format!("yaml: line {line}: collections nest more than {MAX_DEPTH} deep (render's limit)")
}
