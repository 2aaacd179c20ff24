__global__ void axpy(double a, const double* x, double* y, int n) { __shared__ double s[64]; int i = blockIdx.x*blockDim.x+threadIdx.x; s[threadIdx.x%64]=x[i]; __syncthreads(); if (i<n) y[i] += a*s[(threadIdx.x+1)%64]; }
int main() { axpy<<<1,64>>>(1.0, nullptr, nullptr, 0); return 0; }
