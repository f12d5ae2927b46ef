#define _GNU_SOURCE
#include <sys/uio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(){ pid_t pid=getpid(); int sizes[]={64,4096,8192,16384,32768,65536};
 for(int s=0;s<6;s++){int n=sizes[s]; char*src=malloc(n),*dst=malloc(n); memset(src,1,n);memset(dst,2,n);
  for(int k=0;k<3;k++){ int it=20000; double t=now(); for(int i=0;i<it;i++){struct iovec l={dst,n},r={src,n}; if(process_vm_readv(pid,&l,1,&r,1,0)!=n)abort();} double rd=(now()-t)/it;
  t=now(); for(int i=0;i<it;i++){memcpy(dst,src,n); __asm__ volatile(""::"r"(dst):"memory");} double c=(now()-t)/it;
  printf("%d read %.0fns copy %.0fns (src %p)\n",n,rd,c,src);} }
}
