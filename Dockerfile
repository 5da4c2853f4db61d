# syntax=docker/dockerfile:1
# wagraph's container image: the server built with cgo (go-sqlite3) on
# Debian, run on Debian slim as a non-root user with its data in /data.
#
#   docker build -t wagraph .
#   docker run -d --name wagraph -p 8080:8080 -v wagraph-data:/data \
#     -e WAGRAPH_ADMIN_TOKEN="$(openssl rand -hex 32)" wagraph
#   docker run --rm -p 8080:8080 wagraph serve --sandbox   (the simulated network,
#     gone with the container: -v wagraph-sandbox:/data keeps it; the server
#     says so at start)
#
# The server runs as uid 10001: a host directory mounted on /data instead of
# a volume must be writable by it (chown -R 10001:10001 DIR), or the
# container run as the directory's owner (--user "$(id -u):$(id -g)"); the
# server's refusal names both uids.
#
# compose.yaml runs it with PostgreSQL. build/rootfs.sh builds this final
# stage's filesystem without a container engine and internal/packaging
# starts the server in it; that test reads this file, so the two cannot
# drift apart (user, uid, data directory, port, packages, healthcheck).

# The Go of go.mod's `go` line, and one Debian release for both stages: the
# binary links the build stage's glibc.
ARG GO_VERSION=1.26.8
ARG DEBIAN_RELEASE=bookworm

FROM golang:${GO_VERSION}-${DEBIAN_RELEASE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# The golang image has gcc and libc6-dev: cgo is on. No -trimpath: the
# build's paths are the image's own (/src, /go/pkg/mod) whoever builds it,
# and the same build in the tests (internal/packaging) then takes the
# packages code generation compiled already instead of compiling them all
# again.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
	CGO_ENABLED=1 go build -o /out/wagraph ./cmd/wagraph

FROM debian:${DEBIAN_RELEASE}-slim
# ca-certificates: WhatsApp, webhooks and media fetches are TLS; ffmpeg:
# voice notes and video thumbnails.
RUN apt-get update \
	&& apt-get install -y --no-install-recommends ca-certificates ffmpeg \
	&& rm -rf /var/lib/apt/lists/*
RUN groupadd --system --gid 10001 wagraph \
	&& useradd --system --uid 10001 --gid 10001 --home-dir /data --no-create-home --shell /usr/sbin/nologin wagraph \
	&& mkdir -p /data \
	&& chown 10001:10001 /data \
	&& chmod 0700 /data
COPY --from=build /out/wagraph /usr/local/bin/wagraph
ENV WAGRAPH_DATA_DIR=/data \
	WAGRAPH_ADDR=0.0.0.0:8080
VOLUME ["/data"]
EXPOSE 8080
USER wagraph
# /readyz answers 200 once the storage is open and the sessions restored
# (its short JSON lands in `docker inspect`'s health log). `wagraph
# healthcheck` asks it where serve listens with the same settings:
# WAGRAPH_ADDR's address, or loopback when that is every address (0.0.0.0),
# so a server bound to one address (WAGRAPH_ADDR=10.0.0.5:8080) is asked
# there, not on 127.0.0.1.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
	CMD ["wagraph", "healthcheck"]
ENTRYPOINT ["wagraph"]
CMD ["serve"]
