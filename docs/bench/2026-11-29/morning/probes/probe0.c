#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc,char**argv){int per=50,blocks=200; if(argc>1)per=atoi(argv[1]); if(argc>2)blocks=atoi(argv[2]);
MPI_Init(&argc,&argv);int r;MPI_Comm_rank(MPI_COMM_WORLD,&r);char b[8];double *res=malloc(sizeof(double)*blocks);
MPI_Barrier(MPI_COMM_WORLD);
for(int k=0;k<blocks;k++){double t=MPI_Wtime();for(int i=0;i<per;i++){if(r==0){MPI_Send(b,0,MPI_CHAR,1,1,MPI_COMM_WORLD);MPI_Recv(b,0,MPI_CHAR,1,1,MPI_COMM_WORLD,MPI_STATUS_IGNORE);}else{MPI_Recv(b,0,MPI_CHAR,0,1,MPI_COMM_WORLD,MPI_STATUS_IGNORE);MPI_Send(b,0,MPI_CHAR,0,1,MPI_COMM_WORLD);}}res[k]=MPI_Wtime()-t;}
if(r==0){for(int k=0;k<blocks;k++)printf("%.2f ",res[k]*1e6/(2*per));printf("\n");}
MPI_Finalize();}
