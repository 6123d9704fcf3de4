// SPDX-License-Identifier: Apache-2.0
// Queues: relock::blocking_queue is Redisson's RBlockingQueue, a Redis list that producers and
// consumers in any process share; relock::delayed_queue (RDelayedQueue) holds an element back
// for a while, then moves it to such a queue. Values are bytes (std::string).
// Run: ./queues [redis://127.0.0.1:6379]
#include <relock/client.hpp>

#include <chrono>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  try {
    const std::string url = argc > 1 ? argv[1] : "redis://127.0.0.1:6379";
    relock::client producer({.url = url}), consumer({.url = url});  // as two processes

    auto jobs = consumer.blocking_queue("example:jobs");
    jobs.clear();  // a fresh start: jobs an earlier run left would come first

    // The producer: two jobs at once, and one due in 1 s through the delayed queue, whose
    // handle keeps this client moving due elements to "example:jobs" while it lives.
    auto queue = producer.blocking_queue("example:jobs");
    queue.offer("job-1");
    queue.offer("job-2");
    auto later = producer.delayed_queue("example:jobs");
    later.offer("job-3", 1s);
    auto offered = std::chrono::steady_clock::now();

    // The consumer: take() waits as long as it takes; poll(wait) gives up after `wait`. A
    // waiting take or poll has a connection of its own, so the client's locks never queue
    // behind it.
    std::vector<std::string> taken;
    for (int i = 0; i < 3; ++i) {
      auto job = jobs.poll(5s);
      if (!job) throw std::runtime_error("no job came in 5 s");
      auto after = std::chrono::steady_clock::now() - offered;
      std::cout << "took \"" << *job << "\" after "
                << std::chrono::duration_cast<std::chrono::milliseconds>(after).count() << " ms\n";
      taken.push_back(*job);
    }
    if (taken != std::vector<std::string>{"job-1", "job-2", "job-3"})
      throw std::runtime_error("the jobs came in another order");
    if (auto extra = jobs.poll()) throw std::runtime_error("an extra job: " + *extra);
  } catch (const std::exception& e) {
    std::cerr << "queues: " << e.what() << "\n";
    return 1;
  }
}
