assert np.allclose(unit_rows_np(np.array([[3.0, 4.0]])), [[0.6, 0.8]])
