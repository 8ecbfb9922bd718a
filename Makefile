# batchd — the two commands: `make run` and `make test`.
BUILD_DIR ?= build
JOBS ?= $(shell nproc)
PORT ?= 8080
DATA_DIR ?= ./batchd-data

.PHONY: deps configure build run test unit e2e fuzz bench demo clean install deb

# make install: PREFIX (/usr/local), DESTDIR, SYSCONFDIR (/etc); STRIP=1
# strips the binaries. make deb: a Debian package in DEB_DIR (docs/install.md).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
DEB_DIR ?= $(BUILD_DIR)/deb

deps:
	@./scripts/install-deps.sh

configure: deps
	@if [ ! -f $(BUILD_DIR)/build.ninja ]; then \
	  cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo; fi

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	$(BUILD_DIR)/bin/batchd server --listen 127.0.0.1:$(PORT) --data-dir $(DATA_DIR) --allow-loopback-admin

unit: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) --timeout 300

e2e: build
	./test/e2e/run.sh $(BUILD_DIR)/bin

fuzz:
	./scripts/run-fuzz.sh

# Every check (scripts/make-test.sh): layering, the server binaries, then the
# end-to-end suite beside the rest of the build, the thread-safety check, the
# fuzz targets and the unit tests (niced, one at a time); a summary at the end.
test: configure
	JOBS=$(JOBS) ./scripts/make-test.sh $(BUILD_DIR)

bench: build
	./bench/run.sh $(BUILD_DIR)

# The distributed sort example (examples/distributed-sort): N numbers
# (default 100 million) sorted by a JobSet; starts a server if none runs.
demo: build
	$(if $(N),N=$(N)) $(if $(WORKERS),WORKERS=$(WORKERS)) ./examples/distributed-sort/demo.sh

install: build
	PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) SYSCONFDIR=$(SYSCONFDIR) STRIP=$(STRIP) \
	  ./packaging/install.sh $(BUILD_DIR)

deb: build
	./packaging/build-deb.sh $(BUILD_DIR) $(DEB_DIR)

clean:
	rm -rf $(BUILD_DIR) build-fuzz
