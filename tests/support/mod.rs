pub mod mock_llm;
