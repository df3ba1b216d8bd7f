# mcphost serving the example plugins, in an image: built in one stage
# exactly as `make serve` builds them, run in another, small one as a user
# that is not root. The README's "Run it in a container" shows its use;
# internal/testrig/packaging checks it against the Makefile.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t mcphost .
#   docker run -i --rm mcphost        # MCP over stdio, the example plugins

# The base images, as build arguments so that a mirror can stand in.
ARG GO_IMAGE=golang:1.26.8-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
WORKDIR /src
# The Rust example's toolchain, Debian's (bookworm, as the image), installed
# the way make serve installs it.
COPY scripts/apt.sh scripts/setup-rust.sh scripts/
COPY pdk/rust pdk/rust
RUN scripts/setup-rust.sh
COPY go.mod go.sum ./
COPY abi/go.mod abi/
COPY pdk/go/go.mod pdk/go/
RUN go mod download
COPY . .
# VERSION is what `mcphost version` prints (the image has no .git to ask).
ARG VERSION=dev
# A static binary, for the runtime image that has no C library.
ENV CGO_ENABLED=0
RUN make build examples VERSION=${VERSION}

FROM ${RUNTIME_IMAGE}
# The MCP Registry accepts the image for server.json's name by this label.
LABEL io.modelcontextprotocol.server.name="io.github.mcphost/mcphost"
LABEL org.opencontainers.image.source="https://github.com/mcphost/mcphost"
LABEL org.opencontainers.image.licenses="Apache-2.0"
# The checkout's layout, so that mcphost.toml's relative paths hold: the
# files example reads plugins/examples, the notes example writes build/notes.
WORKDIR /opt/mcphost
COPY --from=build /src/build/mcphost /usr/local/bin/mcphost
COPY --from=build /src/mcphost.toml /opt/mcphost/mcphost.toml
COPY --from=build /src/build/plugins /opt/mcphost/build/plugins
COPY --from=build /src/plugins/examples /opt/mcphost/plugins/examples
COPY --from=build --chown=65532:65532 /src/build/notes /opt/mcphost/build/notes
# distroless's nonroot user; its home holds the compilation cache.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/mcphost"]
CMD ["serve", "--plugins", "/opt/mcphost/build/plugins", "--config", "/opt/mcphost/mcphost.toml"]
