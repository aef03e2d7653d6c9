#pragma once

namespace ftmpi::bench {
void run_shm_bench();          // shm_bench.cpp: ping-pong latency and streaming throughput
void run_udp_bench();          // udp_bench.cpp: ping-pong latency on 127.0.0.1, bare sockets and UdpPath
void run_stream_bench();       // stream_bench.cpp: 1 MiB messages streamed on 127.0.0.1, bare TCP and UDP
void run_peer_memory_bench();  // peer_memory_bench.cpp: process_vm_readv against memcpy
}  // namespace ftmpi::bench
