#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>
static volatile uint64_t a[8] __attribute__((aligned(128)));
static volatile uint64_t b[8] __attribute__((aligned(128)));
#define N 2000000
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);sched_setaffinity(0,sizeof s,&s);}
static void* th(void*x){pin(1);for(uint64_t i=1;i<=N;i++){while(a[0]!=i);b[0]=i;}return 0;}
int main(){pthread_t t;pthread_create(&t,0,th,0);pin(0);struct timespec s,e;clock_gettime(CLOCK_MONOTONIC,&s);
for(uint64_t i=1;i<=N;i++){a[0]=i;while(b[0]!=i);}
clock_gettime(CLOCK_MONOTONIC,&e);pthread_join(t,0);double ns=(e.tv_sec-s.tv_sec)*1e9+(e.tv_nsec-s.tv_nsec);printf("one-way %.1f ns\n",ns/N/2);}
